/**
 * The machine a benchmark ran on, as the report states it: logical CPUs, CPU model (from
 * /proc/cpuinfo), total memory, OS release, Node version, and the load average (other work on the
 * same cores skews every number).
 * Must not know: the benchmark.
 */

import { readFileSync } from "node:fs";
import { availableParallelism, loadavg, release, totalmem } from "node:os";

export interface MachineInfo {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly totalMemoryGiB: number;
  readonly os: string;
  readonly node: string;
}

/** What every report says of its run: the command, when, on what, under which load, how long. */
export interface RunMeta {
  readonly command: string;
  readonly date: string;
  readonly machine: MachineInfo;
  readonly loadAverageAtStart: number;
  readonly loadAverageAtEnd: number;
  readonly wallSeconds: number;
}

/** "2 CPUs (AMD EPYC), 23.5 GiB, linux 6.18, Node v24.22.3" */
export function machineLine(m: MachineInfo): string {
  return `${m.cpus} CPUs (${m.cpuModel}), ${m.totalMemoryGiB} GiB, ${m.os}, Node ${m.node}`;
}

function cpuModel(): string {
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("model name"));
    return line?.split(":")[1]?.trim() ?? "unknown";
  } catch {
    return "unknown (no /proc/cpuinfo)";
  }
}

export function machineInfo(): MachineInfo {
  return {
    cpus: availableParallelism(),
    cpuModel: cpuModel(),
    totalMemoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${process.platform} ${release()}`,
    node: process.version,
  };
}

/** The 1-minute load average, rounded. */
export function loadAverage1m(): number {
  return Math.round((loadavg()[0] ?? 0) * 100) / 100;
}
