/**
 * Runpod REST v2 GPU catalogue wire model (`GET /v2/catalog/gpus[?include=AVAILABILITY&product=POD]`)
 * and its checked parsing. The reference (§10) documents only `price.{secure,community}` (USD per
 * GPU-hour, on demand) and `maxCount`; the rest is tolerant: the list may come bare or wrapped as
 * `{"gpus":[…]}` (a guess, like `{"pods":[…]}`), an entry without an `id` is skipped, a price may be a
 * numeric string, and a missing or non-positive price is "unknown" (undefined), never 0.
 * Must not know: HTTP, PAIR's ledger, which GPU types a node wants.
 */

import { WireShapeError } from "./wire.js";

export interface GpuCatalogEntry {
  /** The id a create request names in `gpu.id`, e.g. "NVIDIA L40S". */
  readonly id: string;
  readonly displayName: string | undefined;
  /** Largest GPU count one pod may ask for, when reported. */
  readonly maxCount: number | undefined;
  /** USD per GPU-hour, on demand; undefined when the catalogue gives no usable price. */
  readonly price: { readonly secure: number | undefined; readonly community: number | undefined };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function positive(value: unknown): number | undefined {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : undefined;
}

/** The entries of a catalogue answer; throws WireShapeError when it is no list at all. */
export function parseGpuCatalog(value: unknown): GpuCatalogEntry[] {
  const list = Array.isArray(value) ? value : isRecord(value) ? value["gpus"] : undefined;
  if (!Array.isArray(list)) throw new WireShapeError("body", 'expected [ … ] or {"gpus":[…]}');
  const entries: GpuCatalogEntry[] = [];
  for (const item of list) {
    if (!isRecord(item) || typeof item["id"] !== "string" || item["id"] === "") continue;
    const price = isRecord(item["price"]) ? item["price"] : {};
    const maxCount = positive(item["maxCount"]);
    entries.push({
      id: item["id"],
      displayName: typeof item["displayName"] === "string" ? item["displayName"] : undefined,
      maxCount: maxCount !== undefined && Number.isInteger(maxCount) ? maxCount : undefined,
      price: { secure: positive(price["secure"]), community: positive(price["community"]) },
    });
  }
  return entries;
}
