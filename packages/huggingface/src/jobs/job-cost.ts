/**
 * What a job costs per hour while it is starting or running: the flavor's per-minute price (as
 * `GET /api/jobs/hardware` lists it) × 60, plus the flat exposed-port surcharge when it exposes a
 * port (reference §5.7 [D]: $0.01/h). Billed per started minute; the ledger accrues at this rate.
 * Must not know: HTTP, the ledger's state.
 */

import { EXPOSED_PORT_USD_PER_HOUR } from "./capabilities.js";
import type { HfJobFlavor } from "./jobs-model.js";

/**
 * Half a micro-dollar per minute, per hour: the listing rounds each per-minute price to the
 * micro-dollar (l4x1, $0.80/h, is listed 0.013333 USD/min), so the price HF bills may be up to half
 * a micro-dollar a minute more than listed. Counting it keeps the ledger at or above what HF bills.
 */
export const LISTING_ROUNDING_MICRO_USD_PER_HOUR = 30;

/**
 * Micro-USD per hour (integer), as the ledger counts money: the listed per-minute price × 60, plus
 * the listing's rounding margin (never less than HF bills), plus the port surcharge.
 */
export function jobRateMicroUsdPerHour(flavor: HfJobFlavor, exposesPort: boolean): number {
  if (!(flavor.usdPerMinute >= 0)) throw new RangeError(`flavor ${flavor.name}: usdPerMinute must be >= 0`);
  return (
    Math.round(flavor.usdPerMinute * 1e6) * 60 +
    LISTING_ROUNDING_MICRO_USD_PER_HOUR +
    (exposesPort ? Math.round(EXPOSED_PORT_USD_PER_HOUR * 1e6) : 0)
  );
}

/** Micro-USD for `startedMinutes` billed minutes at that rate. */
export function jobCostMicroUsd(flavor: HfJobFlavor, exposesPort: boolean, startedMinutes: number): number {
  if (!Number.isInteger(startedMinutes) || startedMinutes < 0)
    throw new RangeError(`startedMinutes: expected an integer >= 0, got ${startedMinutes}`);
  return Math.round((jobRateMicroUsdPerHour(flavor, exposesPort) * startedMinutes) / 60);
}
