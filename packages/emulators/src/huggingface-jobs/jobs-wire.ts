/**
 * The Job object as the Hub's Jobs API returns it (reference §5.3 [C]): id, timestamps, image and
 * argv, plain environment, secret *names* only (never values), flavor, timeout, labels, status with
 * stage, message and exposed-port URLs, durations recomputed on every read, owner and initiator.
 * Must not know: HTTP, lifecycle rules.
 */

import type { JobRecord } from "./jobs-world.js";

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/** Where the exposed port `port` of a job answers on this emulator (HF: `https://{id}--{port}.hf.jobs`). */
export function exposeUrl(baseUrl: string, jobId: string, port: number): string {
  return `${baseUrl}/jobs-proxy/${jobId}--${port}`;
}

export function ownerId(name: string): string {
  return Array.from(name.padEnd(12, "0").slice(0, 12), (c) =>
    (c.charCodeAt(0) % 256).toString(16).padStart(2, "0"),
  ).join("");
}

export function renderJob(record: JobRecord, baseUrl: string, nowMs: number): Record<string, unknown> {
  const schedEnd = record.startedAtMs ?? record.finishedAtMs ?? nowMs;
  const end = record.finishedAtMs ?? nowMs;
  const seconds = (ms: number) => Math.max(0, Math.floor(ms / 1000));
  return {
    type: "job",
    id: record.id,
    createdAt: iso(record.createdAtMs),
    startedAt: iso(record.startedAtMs),
    finishedAt: iso(record.finishedAtMs),
    dockerImage: record.spec.dockerImage ?? null,
    spaceId: record.spec.spaceId ?? null,
    command: record.spec.command,
    arguments: record.spec.arguments,
    environment: record.spec.environment,
    secrets: Object.keys(record.spec.secrets),
    flavor: record.flavor.name,
    timeoutSeconds: record.spec.timeoutSeconds,
    arch: "amd64",
    labels: record.labels,
    volumes: null,
    status: {
      stage: record.stage,
      message: record.message,
      failureCount: record.stage === "ERROR" ? 1 : 0,
      exposeUrls:
        record.spec.exposePorts.length === 0
          ? null
          : record.spec.exposePorts.map((port) => exposeUrl(baseUrl, record.id, port)),
      sshUrl: null,
    },
    durations: {
      schedulingSecs: seconds(schedEnd - record.createdAtMs),
      runningSecs: record.startedAtMs === undefined ? 0 : seconds(end - record.startedAtMs),
      totalSecs: seconds(end - record.createdAtMs),
    },
    owner: { id: ownerId(record.namespace), name: record.namespace, type: "user" },
    initiator: { type: "user", id: ownerId(record.createdBy), name: record.createdBy },
  };
}
