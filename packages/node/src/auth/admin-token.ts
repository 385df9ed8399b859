/**
 * The admin bearer token: created once in `<data_dir>/admin.token` with mode 0600, read by the CLI
 * and the dashboard, compared in constant time. It guards /pair/v1/… on the client port.
 * Must not know: routes.
 */

import { randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export function adminTokenPath(dataDir: string): string {
  return join(dataDir, "admin.token");
}

/** Read the token, creating it (0600, in a 0700 data dir) if it does not exist yet. */
export function ensureAdminToken(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = adminTokenPath(dataDir);
  try {
    const mode = statSync(path).mode & 0o777;
    if (mode !== 0o600) chmodSync(path, 0o600);
    return readFileSync(path, "utf8").trim();
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code !== "ENOENT") throw cause;
    const token = randomBytes(32).toString("hex");
    writeFileSync(path, `${token}\n`, { mode: 0o600, flag: "wx" });
    return token;
  }
}

export function readAdminToken(dataDir: string): string {
  return readFileSync(adminTokenPath(dataDir), "utf8").trim();
}

/** True when the Authorization header carries exactly this bearer token. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  if (header === undefined || !header.startsWith("Bearer ")) return false;
  const given = Buffer.from(header.slice("Bearer ".length).trim());
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}
