/**
 * Whether a bundle built by scripts/build-cli.mjs still matches its sources: every file listed in its
 * inputs list (`X.inputs.json` beside `X.mjs`) still has the mtime and size it had at the build. A
 * missing bundle or list, a list of another format, or any input changed, gone or unreadable means
 * not fresh: `pair` then runs the sources through tsx, so an edited source never runs stale code.
 * One stat per input: 779 files (PAIR's sources and the bundled node_modules), a few ms on a loaded
 * machine, against 2–4 s for tsx to start.
 * Must not know: how the bundle is built, what the CLI does.
 */

import { readFileSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";

const INPUTS_FORMAT = 1;

/**
 * `undefined` when `bundlePath` (an absolute `.mjs` path) is fresh; otherwise why not, naming the
 * first input found changed (for `PAIR_SHOW_RUNTIME=1`).
 * @param {string} bundlePath
 * @returns {string | undefined}
 */
export function whyNotFresh(bundlePath) {
  const inputsPath = bundlePath.replace(/\.mjs$/, "") + ".inputs.json";
  let list;
  try {
    statSync(bundlePath);
    list = JSON.parse(readFileSync(inputsPath, "utf8"));
  } catch {
    return `${bundlePath} or its inputs list is missing (npm run build)`;
  }
  if (
    list === null ||
    typeof list !== "object" ||
    list.format !== INPUTS_FORMAT ||
    typeof list.inputs !== "object"
  )
    return `${inputsPath} is not an inputs list of this version (npm run build)`;
  const base = dirname(bundlePath);
  for (const [path, recorded] of Object.entries(list.inputs)) {
    const file = resolve(base, path);
    const s = statSync(file, { throwIfNoEntry: false });
    if (s === undefined) return `${file} is gone since the build`;
    if (!Array.isArray(recorded) || s.mtimeMs !== recorded[0] || s.size !== recorded[1])
      return `${file} changed since the build`;
  }
  return undefined;
}
