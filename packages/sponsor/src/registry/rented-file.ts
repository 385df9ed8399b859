/**
 * What `pair rented attach | share | policy` changed at run time, kept in `<data_dir>/rented-nodes.json`
 * (0600, replaced atomically): attached nodes as config-shaped entries (credential *references* only —
 * the file never holds a secret), and per-node overrides of `share_with_cluster` and `routing.use`
 * that take precedence over the config file until `pair rented reset NAME`.
 * Must not know: validation rules (config/ reads the entries), probing, routing.
 */

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RoutingUse } from "../config/index.js";
import { writeFileAtomically } from "@pair/cluster";

export const RENTED_FILE = "rented-nodes.json";

export interface RentedOverride {
  readonly share_with_cluster?: boolean;
  readonly routing_use?: RoutingUse;
}

export interface RentedFile {
  readonly version: 1;
  /** Entries shaped like the config file's `rented_nodes:` items. */
  readonly attached: readonly Record<string, unknown>[];
  readonly overrides: Readonly<Record<string, RentedOverride>>;
}

const EMPTY: RentedFile = { version: 1, attached: [], overrides: {} };

export function readRentedFile(dataDir: string): RentedFile {
  const path = join(dataDir, RENTED_FILE);
  if (!existsSync(path)) return EMPTY;
  const json = JSON.parse(readFileSync(path, "utf8")) as Partial<RentedFile>;
  if (json.version !== 1 || !Array.isArray(json.attached) || typeof json.overrides !== "object")
    throw new Error(`${path}: not a PAIR rented-nodes file (version 1); move it away and attach again`);
  return { version: 1, attached: json.attached, overrides: json.overrides ?? {} };
}

export function writeRentedFile(dataDir: string, file: RentedFile): void {
  writeFileAtomically(join(dataDir, RENTED_FILE), JSON.stringify(file, null, 2) + "\n");
}
