/**
 * From raw measurements to the report's figures: one load's streams to latency percentiles, a
 * child's resource sample to use per stream, a CPU-bound load to requests/s. Pure functions.
 * Must not know: which target was measured, the report's layout.
 */

import type { ResourceSample } from "./child-protocol.js";
import type { LoadResult } from "./load-generator.js";
import type { NodeUse, StreamMetrics, Throughput } from "./report.js";
import { percentile } from "./stats.js";

export function streamMetrics(result: LoadResult): StreamMetrics {
  const first = result.samples.map((s) => s.firstChunkMs);
  const total = result.samples.map((s) => s.totalMs);
  return {
    streams: result.samples.length,
    errors: result.errors,
    firstP50: percentile(first, 50),
    firstP99: percentile(first, 99),
    totalP50: percentile(total, 50),
    totalP99: percentile(total, 99),
  };
}

/** A process's use over a window in which it carried `streams` streams. */
export function nodeUse(sample: ResourceSample, streams: number): NodeUse {
  return {
    cpuMsPerStream: (sample.cpuUserMs + sample.cpuSystemMs) / Math.max(1, streams),
    eventLoopUtilization: sample.eventLoopUtilization,
    rssPeakBytes: sample.rssPeakBytes,
    loopDelayP99Ms: sample.loopDelayP99Ms,
    loopDelayMaxMs: sample.loopDelayMaxMs,
  };
}

export function cpuMs(sample: ResourceSample): number {
  return sample.cpuUserMs + sample.cpuSystemMs;
}

/** Measured streams per second between the first one's start and the last one's end. */
export function throughput(result: LoadResult): Throughput {
  const rps = result.elapsedMs > 0 ? (result.samples.length * 1000) / result.elapsedMs : 0;
  return { rps, streams: result.samples.length, errors: result.errors };
}
