/**
 * Builds the `pair` command into one ESM file, `dist/pair.mjs` (git-ignored), with esbuild, so that
 * `pair` runs on plain node without tsx's loader thread (35–43 MB of RSS: docs/performance.md,
 * "Settings the measurements decided"). Beside it, `dist/pair.inputs.json` lists every file the bundle was built from
 * with its mtime and size: `bin/bundle-freshness.js` runs the bundle only while all of them are
 * unchanged, and falls back to the sources through tsx otherwise.
 *
 *   node scripts/build-cli.mjs                       # `npm run build`; also run by `npm ci` (prepare)
 *   node scripts/build-cli.mjs --entry X.ts --outfile Y.mjs   # another entry (the benchmarks' node child)
 *
 * In the bundle, every source file's `import.meta.url` is its own source file's URL (resolved from the
 * bundle's location), so files found relative to a source (the dashboard's dist/, better-sqlite3 for
 * the history thread) are found from the bundle too. Native and CJS-only modules that must stay in
 * node_modules are external. The bundle and its inputs list are each written to a temp file and
 * renamed: a `pair` starting meanwhile sees the old pair, or no inputs list (so it runs the sources).
 * Must not know: what the CLI does.
 */

import { build } from "esbuild";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Modules kept in node_modules: native addons (a .node file cannot be bundled). */
export const EXTERNAL_MODULES = Object.freeze(["better-sqlite3", "@napi-rs/keyring"]);

/** The inputs list's format version: another version reads as "not fresh". */
export const INPUTS_FORMAT = 1;

/** `X.mjs` → `X.inputs.json`. */
export function inputsPathOf(outfile) {
  return outfile.replace(/\.mjs$/, "") + ".inputs.json";
}

/**
 * An esbuild plugin: in the workspace's own TypeScript files, `import.meta.url` becomes the source
 * file's URL, found relative to the bundle's own URL at run time (so the tree can move).
 */
function sourceUrlPlugin(outfile) {
  return {
    name: "pair-source-url",
    setup(b) {
      b.onLoad({ filter: /\.[cm]?tsx?$/ }, (args) => {
        if (args.path.includes(`${"/"}node_modules${"/"}`)) return undefined;
        const text = readFileSync(args.path, "utf8");
        if (!text.includes("import.meta.url")) return { contents: text, loader: "ts" };
        const fromBundle = relative(dirname(outfile), args.path).split("\\").join("/");
        const expression = `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`;
        return { contents: text.split("import.meta.url").join(expression), loader: "ts" };
      });
    },
  };
}

/**
 * Rewrites every non-ASCII character of a built file as its `\uXXXX` escape. esbuild already writes
 * strings, templates, regular expressions and identifiers in ASCII, so what is left is in comments
 * (`response’s` in undici's), where the escape changes nothing, and anywhere else it would mean the
 * same character. Why: V8 keeps a script's whole source in the heap, and one non-ASCII character
 * makes it a two-byte string: 6.7 MB instead of 3.4 for `dist/pair.mjs` (a heap snapshot of an idle node).
 */
function asciiOnly(file) {
  const text = readFileSync(file, "utf8");
  if (!/[^\x00-\x7f]/.test(text)) return;
  const escaped = text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  writeFileSync(file, escaped);
}

/** The chunks beside `outfile` that an earlier build of it wrote (`X-*.mjs` beside `X.mjs`). */
function chunksBeside(outfile) {
  const prefix = `${basename(outfile, ".mjs")}-`;
  return readdirSync(dirname(outfile)).filter((f) => f.startsWith(prefix) && f.endsWith(".mjs"));
}

/**
 * Builds `entry` into `outfile` and writes its inputs list. Code that only a dynamic import reaches
 * (`pair demo`'s sandbox and the emulators) goes to chunks beside it (`X-NAME-HASH.mjs`), which node
 * loads only when that import runs; the inputs list names them under `outputs`. Returns the number
 * of inputs and the size of what `pair` loads at start. Throws (with esbuild's messages) when the
 * sources do not build.
 */
export async function buildCli({ entry, outfile, root = ROOT }) {
  const started = Date.now();
  const dir = dirname(outfile);
  const base = basename(outfile, ".mjs");
  mkdirSync(dir, { recursive: true });
  const inputsPath = inputsPathOf(outfile);
  const tmpDir = join(dir, `.${base}.${process.pid}.tmp`);
  rmSync(tmpDir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: { [base]: entry },
    outdir: tmpDir,
    outExtension: { ".js": ".mjs" },
    chunkNames: `${base}-[name]-[hash]`,
    splitting: true,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    external: [...EXTERNAL_MODULES],
    metafile: true,
    logLevel: "warning",
    legalComments: "none",
    // CommonJS dependencies call require() for node's built-ins: give the ESM bundle one (each
    // chunk gets its own, as each is a module of its own).
    banner: {
      js: "import { createRequire as __pairCreateRequire } from 'node:module'; const require = __pairCreateRequire(import.meta.url);",
    },
    // The temp folder is beside `outfile`, so a source's path relative to it holds for the outputs.
    plugins: [sourceUrlPlugin(outfile)],
  });
  const outputs = Object.keys(result.metafile.outputs).map((o) => basename(o));
  const chunks = outputs.filter((o) => o !== `${base}.mjs`);
  for (const o of outputs) asciiOnly(join(tmpDir, o));
  const inputs = {};
  for (const path of Object.keys(result.metafile.inputs)) {
    const absolute = isAbsolute(path) ? path : resolve(root, path);
    const s = statSync(absolute);
    // A file saved while esbuild read it may be newer than what the bundle holds: record it as
    // changed (never fresh) rather than trust it.
    inputs[relative(dir, absolute)] = s.mtimeMs >= started ? [-1, -1] : [s.mtimeMs, s.size];
  }
  // Chunks first (a name holds its content's hash, so one already there is the same file), then the
  // entry: a `pair` starting meanwhile sees the old pair, or no inputs list (so it runs the sources).
  for (const c of chunks) renameSync(join(tmpDir, c), join(dir, c));
  rmSync(inputsPath, { force: true });
  renameSync(join(tmpDir, `${base}.mjs`), outfile);
  rmSync(tmpDir, { recursive: true, force: true });
  const inputsTmp = `${inputsPath}.${process.pid}.tmp`;
  writeFileSync(inputsTmp, JSON.stringify({ format: INPUTS_FORMAT, inputs, outputs }));
  renameSync(inputsTmp, inputsPath);
  for (const stale of chunksBeside(outfile)) if (!chunks.includes(stale)) rmSync(join(dir, stale));
  // What `pair` loads at start: the entry and the chunks it imports statically.
  const entryMeta = Object.entries(result.metafile.outputs).find(([o]) => basename(o) === `${base}.mjs`)[1];
  const atStart = [
    `${base}.mjs`,
    ...entryMeta.imports
      .filter((i) => i.kind === "import-statement" && !i.external)
      .map((i) => basename(i.path)),
  ];
  return {
    inputs: Object.keys(inputs).length,
    bytes: atStart.reduce((sum, o) => sum + statSync(join(dir, o)).size, 0),
    outputs,
  };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      entry: { type: "string", default: resolve(ROOT, "packages/node/src/cli/main.ts") },
      outfile: { type: "string", default: resolve(ROOT, "dist/pair.mjs") },
    },
    strict: true,
  });
  const outfile = resolve(values.outfile);
  const t0 = performance.now();
  const { inputs, bytes, outputs } = await buildCli({ entry: resolve(values.entry), outfile });
  console.log(
    `build-cli: ${relative(process.cwd(), outfile) || outfile} and ${outputs.length - 1} chunks (${(bytes / 1024).toFixed(0)} KiB loaded at start, from ${inputs} files) in ${(performance.now() - t0).toFixed(0)} ms`,
  );
}
