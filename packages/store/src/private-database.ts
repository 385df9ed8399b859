/**
 * Opening a SQLite database only its owner can read, whatever the process umask: the file is made
 * (or reset to) mode 0600 before SQLite opens it, and so are a `-wal` and `-shm` left by an earlier
 * run. SQLite gives the WAL and SHM files it creates later the database file's own mode, so they are
 * 0600 too.
 * Must not know: what the database holds.
 */

import { chmodSync, closeSync, openSync } from "node:fs";
import Database from "better-sqlite3";

export const PRIVATE_FILE_MODE = 0o600;

/** The database at `path`, its files made 0600 first (created if missing). */
export function openPrivateDatabase(path: string, options: Database.Options = {}): Database.Database {
  makePrivate(path);
  return new Database(path, options);
}

/** Creates `path` 0600 if it is missing, and sets it and its `-wal`/`-shm` (if any) to 0600. */
export function makePrivate(path: string): void {
  if (path === ":memory:" || path === "" || path.startsWith("file:")) return;
  closeSync(openSync(path, "a", PRIVATE_FILE_MODE));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      chmodSync(file, PRIVATE_FILE_MODE);
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== "ENOENT") throw cause;
    }
  }
}
