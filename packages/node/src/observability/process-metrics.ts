/**
 * The node process itself on /metrics: build info, CPU, memory, start time, and the event loop's
 * delay (what a request waits before its callback runs). Read at scrape time, except the event-loop
 * histogram, which libuv samples on its own timer (monitorEventLoopDelay: no work on the request path).
 * Must not know: what the node does.
 */

import { SYSTEM_CLOCK } from "@pair/cluster";
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { Metrics } from "./metrics.js";

/** How often libuv samples the loop's delay, in ms. */
const LOOP_RESOLUTION_MS = 20;

/** Registers the process's metrics; the function it returns stops the event-loop sampling. */
export function registerProcessMetrics(metrics: Metrics, version: string): () => void {
  // The process started in real time, whatever clock the node runs on.
  const startedS = Math.round(SYSTEM_CLOCK.now().wallMs / 1000 - process.uptime());
  metrics.gauge(
    "pair_build_info",
    "Always 1: the PAIR and Node.js versions this node runs.",
    { version, node_version: process.version },
    () => 1,
  );
  metrics.family(
    "process_cpu_seconds_total",
    "User and system CPU time spent, in seconds.",
    "counter",
    () => {
      const cpu = process.cpuUsage();
      return [{ labels: {}, value: (cpu.user + cpu.system) / 1e6 }];
    },
  );
  metrics.gauge("process_resident_memory_bytes", "Resident memory size in bytes.", {}, () =>
    process.memoryUsage.rss(),
  );
  metrics.gauge(
    "process_start_time_seconds",
    "Start time of the process since the epoch, in seconds.",
    {},
    () => startedS,
  );
  metrics.family("nodejs_heap_bytes", "V8 heap used and total, in bytes.", "gauge", () => {
    const m = process.memoryUsage();
    return [
      { labels: { kind: "used" }, value: m.heapUsed },
      { labels: { kind: "total" }, value: m.heapTotal },
      { labels: { kind: "external" }, value: m.external },
    ];
  });
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loop.enable();
  metrics.family(
    "nodejs_eventloop_delay_seconds",
    "Event-loop delay since the last scrape (p50, p99, max), in seconds.",
    "gauge",
    () => {
      // Nanoseconds; the histogram restarts at each scrape so each sample covers one interval.
      const samples =
        loop.count === 0
          ? []
          : [
              { labels: { quantile: "0.5" }, value: loop.percentile(50) / 1e9 },
              { labels: { quantile: "0.99" }, value: loop.percentile(99) / 1e9 },
              { labels: { quantile: "1" }, value: loop.max / 1e9 },
            ];
      loop.reset();
      return samples;
    },
  );
  return () => loop.disable();
}
