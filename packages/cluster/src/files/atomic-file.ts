/**
 * Replacing a small file in the data dir so that a crash leaves either the old or the new content:
 * a fresh 0600 temp file beside it, written and flushed, renamed over it, then the directory flushed.
 * Used for the trust store (`peers.json`) and the API key store (`api-keys.json`).
 * Must not know: what the files hold.
 */

import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** Replace `path` with `text` atomically; the temp file's name carries `tempSuffix` (random by default). */
export function writeFileAtomically(
  path: string,
  text: string | Buffer,
  tempSuffix = `${process.pid}.${randomBytes(6).toString("hex")}`,
): void {
  const temp = `${path}.${tempSuffix}.tmp`;
  const fd = openSync(temp, "wx", 0o600);
  try {
    try {
      writeFileSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (cause) {
    rmSync(temp, { force: true });
    throw cause;
  }
  syncDirectory(dirname(path));
}

/** Make a rename durable. Not every platform can open a directory (Windows): best effort. */
export function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // The file's content is already flushed; only the directory entry's durability is at stake.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
