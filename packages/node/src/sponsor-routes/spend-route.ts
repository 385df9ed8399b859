/**
 * `GET /pair/v1/rented/spend?name=NODE&range=24h|30d` (admin): a managed rented node's spend over
 * time from the sponsor's ledger — 24 hourly buckets ending with the current hour, or 30 daily
 * buckets (UTC days) ending with today — as `{name, range, bucket_s, points: [{start, usd}]}`.
 * A node the ledger has never charged has every bucket at 0.
 * Must not know: how the ledger is kept, who may call (the admin API checked that), the charts.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { adminFail, sendAdminJson } from "../http/admin-json.js";
import type { SharedLedger } from "@pair/sponsor";

export const SPEND_PATH = "/pair/v1/rented/spend";

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const RANGES = {
  "24h": { bucketMs: HOUR_MS, buckets: 24 },
  "30d": { bucketMs: DAY_MS, buckets: 30 },
} as const;

export function serveSpend(ledger: SharedLedger, req: IncomingMessage, res: ServerResponse, url: URL): void {
  req.resume();
  if (req.method !== "GET" && req.method !== "HEAD")
    return adminFail(res, 405, "invalid_request", `use GET for ${SPEND_PATH}`);
  const name = url.searchParams.get("name");
  if (name === null || name === "")
    return adminFail(res, 400, "invalid_request", `${SPEND_PATH}: name: expected ?name=<rented node>`);
  const range = url.searchParams.get("range") ?? "24h";
  if (range !== "24h" && range !== "30d")
    return adminFail(res, 400, "invalid_request", `${SPEND_PATH}: range: expected 24h or 30d, got ${range}`);
  const { bucketMs, buckets } = RANGES[range];
  // The last bucket holds now: it ends at the next hour (or UTC midnight).
  const endMs = Math.floor(ledger.nowMs() / bucketMs) * bucketMs + bucketMs;
  const window = { fromMs: endMs - buckets * bucketMs, bucketMs, buckets };
  const points = ledger.opened()?.spendSeries(name, window) ?? [];
  return sendAdminJson(res, 200, {
    name,
    range,
    bucket_s: bucketMs / 1000,
    points: Array.from({ length: buckets }, (_, i) => ({
      start: new Date(window.fromMs + i * bucketMs).toISOString(),
      usd: (points[i]?.microUsd ?? 0) / 1e6,
    })),
  });
}
