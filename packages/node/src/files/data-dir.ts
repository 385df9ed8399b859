/**
 * The data dir is the owner's alone: created 0700, and set back to 0700 at every start when it exists
 * with a looser mode (the history, ledgers and admin token inside must not be readable by others).
 * A dir owned by another user is refused: this user cannot make it private.
 * Must not know: what the files inside are.
 */

import { chmodSync, mkdirSync, statSync } from "node:fs";

export const DATA_DIR_MODE = 0o700;

/** Makes `dataDir` (and its parents, if missing) and forces it to 0700. @throws Error saying what to do */
export function ensurePrivateDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: DATA_DIR_MODE });
  const stat = statSync(dataDir);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid)
    throw new Error(
      `node.data_dir ${dataDir} belongs to another user (uid ${stat.uid}): run PAIR as that user, ` +
        "or set node.data_dir to a directory of your own",
    );
  if ((stat.mode & 0o777) === DATA_DIR_MODE) return;
  try {
    chmodSync(dataDir, DATA_DIR_MODE);
  } catch (cause) {
    throw new Error(
      `node.data_dir ${dataDir} cannot be made private (mode 0700): ${(cause as Error).message}`,
      { cause },
    );
  }
}
