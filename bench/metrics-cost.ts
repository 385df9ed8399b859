/**
 * What the metrics cost the request path: the counter updates one finished request makes
 * (`pair_requests_total`, the two histograms, and the two `pair_tokens_total` increments), timed
 * in this process over many repetitions, median of several batches; and what a scrape costs with
 * the process, cluster and event-loop families registered. Compare the per-request figure with a
 * request's CPU time on the node (bench/node-cpu.ts).
 *
 *   npx tsx bench/metrics-cost.ts
 *
 * Must not know: HTTP.
 */

import { Metrics } from "../packages/node/src/observability/metrics.js";
import { registerClusterMetrics } from "../packages/node/src/observability/cluster-metrics.js";
import { registerProcessMetrics } from "../packages/node/src/observability/process-metrics.js";
import { median } from "./stats.js";

const REPS = 200_000;
const BATCHES = 7;

function timeNs(reps: number, run: (i: number) => void): number {
  const times: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < reps; i++) run(i);
    times.push(Number(process.hrtime.bigint() - start) / reps);
  }
  return median(times);
}

const metrics = new Metrics();
const models = ["llama3:8b", "qwen3:0.6b", "mistral:7b"];
const request = (i: number, withTokens: boolean) => {
  const model = models[i % 3]!;
  const series = { route: "/v1/chat/completions", model, engine: "ollama" };
  metrics.inc("pair_requests_total", "h", {
    route: series.route,
    model,
    engine: "ollama",
    outcome: "completed",
  });
  metrics.observe("pair_request_duration_seconds", "h", series, 0.25);
  metrics.observe("pair_first_byte_seconds", "h", series, 0.02);
  if (withTokens) {
    metrics.inc("pair_tokens_total", "h", { model, node: "node-a", direction: "in" }, 12);
    metrics.inc("pair_tokens_total", "h", { model, node: "node-a", direction: "out" }, 40);
  }
};
const before = timeNs(REPS, (i) => request(i, false));
const after = timeNs(REPS, (i) => request(i, true));
const stop = registerProcessMetrics(metrics, "0.0.0");
const rented = Array.from({ length: 4 }, (_, i) => ({
  name: `gpu-${i}`,
  state: "running",
  managed: { spend_usd: { total: 1.5 } },
}));
registerClusterMetrics(metrics, {
  rented: () => rented,
  peers: () => Array.from({ length: 8 }, (_, i) => ({ name: `peer-${i}`, state: "up" as const })),
});
const scrapeUs = timeNs(200, () => metrics.render()) / 1000;
stop();
console.log(
  JSON.stringify({
    per_request_ns_before: Math.round(before),
    per_request_ns_after: Math.round(after),
    ratio: Number((after / before).toFixed(2)),
    added_ns: Math.round(after - before),
    scrape_us: Number(scrapeUs.toFixed(1)),
  }),
);
