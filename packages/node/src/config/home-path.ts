/**
 * File paths in config: `~` and `~/…` expand against the home directory passed in; anything else must
 * be absolute, so a path never depends on the directory `pair` was started from.
 * Must not know: the file system (nothing is checked to exist), YAML.
 */

import { isAbsolute, join, normalize } from "node:path";

export type PathResult =
  { readonly ok: true; readonly path: string } | { readonly ok: false; readonly message: string };

export function expandHome(text: string, homeDir: string): PathResult {
  if (text === "~") return { ok: true, path: normalize(homeDir) };
  if (text.startsWith("~/")) return { ok: true, path: join(homeDir, text.slice(2)) };
  if (text.startsWith("~")) {
    return {
      ok: false,
      message: "only ~ and ~/… are expanded (the home directory of the user running pair)",
    };
  }
  if (!isAbsolute(text)) return { ok: false, message: "expected an absolute path or one starting with ~/" };
  return { ok: true, path: normalize(text) };
}
