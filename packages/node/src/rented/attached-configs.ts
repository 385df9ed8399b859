/**
 * The rented nodes added at run time (`pair rented attach | create`, in `<data_dir>/rented-nodes.json`)
 * read as config entries, for the managed endpoints at start: a node PAIR created is managed again
 * after a restart (its obligations restored from SQLite, its endpoint adopted by exact key).
 * Entries that do not read, or whose name the config file already uses, are left out (the rented
 * nodes registry logs why).
 * Must not know: probing, routing, the hosting contract.
 */

import { readRentedNodeValue, type RentedNodeConfig } from "../config/index.js";
import { readRentedFile } from "./rented-file.js";

export function attachedRentedConfigs(
  dataDir: string,
  nodeName: string,
  configured: readonly RentedNodeConfig[],
): RentedNodeConfig[] {
  const taken = new Set(configured.map((c) => c.name));
  return readRentedFile(dataDir).attached.flatMap((entry) => {
    const read = readRentedNodeValue(entry, nodeName);
    return read.ok && !taken.has(read.node.name) ? [read.node] : [];
  });
}
