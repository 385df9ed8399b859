/**
 * The rented nodes added at run time (`pair rented attach | create`, in `<data_dir>/rented-nodes.json`)
 * read as config entries, for the managed endpoints at start: a node PAIR created is managed again
 * after a restart (its obligations restored from SQLite, its endpoint resumed by exact key).
 * Entries that do not read, or whose name the config file already uses, are left out (the rented
 * nodes registry logs why).
 * Must not know: probing, routing, the hosting contract.
 */

import type { RentedConfigReader, RentedNodeConfig } from "../config/index.js";
import { readRentedFile } from "./rented-file.js";

/**
 * The daily cap a saved entry gets when it was attached or created before billed nodes needed a
 * budget: the smallest the reader takes, so the node stays managed (paused when idle and at exit,
 * its obligations kept) but spends nothing more until it is attached again with a budget. Dropping
 * it instead would leave a billed endpoint that nothing pauses.
 */
export const LEGACY_UNBUDGETED_USD_PER_DAY = 0.000001;

/** A saved entry read as a config entry, an old unbudgeted billed one with the spent-out cap above. */
export function readSavedEntry(
  entry: Readonly<Record<string, unknown>>,
  nodeName: string,
  readConfig: RentedConfigReader,
): ReturnType<RentedConfigReader> & { readonly legacyBudget?: true } {
  const read = readConfig(entry, nodeName);
  if (read.ok || !read.problems.every((p) => p.code === "budget_required")) return read;
  const capped = readConfig({ ...entry, budget: { usd_per_day: LEGACY_UNBUDGETED_USD_PER_DAY } }, nodeName);
  return capped.ok ? { ...capped, legacyBudget: true } : read;
}

export function attachedRentedConfigs(
  dataDir: string,
  nodeName: string,
  configured: readonly RentedNodeConfig[],
  readConfig: RentedConfigReader,
): RentedNodeConfig[] {
  const taken = new Set(configured.map((c) => c.name));
  return readRentedFile(dataDir).attached.flatMap((entry) => {
    const read = readSavedEntry(entry, nodeName, readConfig);
    return read.ok && !taken.has(read.node.name) ? [read.node] : [];
  });
}
