/**
 * A pod rendered as REST v2 returns it (the `Pod` schema): the configuration it was created with,
 * env as given (secret references literal), `status`, the `actions` valid now, `cost` (USD/hour,
 * 0 when EXITED/ERROR/TERMINATED), `runtime` (null unless RUNNING), ISO `createdAt`/`startedAt`.
 * Pure over a record and an instant.
 * Must not know: HTTP, billing totals, engines.
 */

import { ALLOWED_ACTIONS, holdsGpu, type PodAction, type PodStatus } from "./pod-lifecycle.js";
import type { PodRecord } from "./pod-record.js";

export interface PodWire {
  readonly id: string;
  readonly name: string;
  readonly image: string;
  readonly args: string;
  readonly disk: number;
  readonly ports: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly registry: string | null;
  readonly status: PodStatus;
  readonly actions: readonly PodAction[];
  readonly mounts: PodRecord["spec"]["mounts"];
  readonly gpu: { readonly id: string; readonly count: number };
  readonly cloud: "SECURE" | "COMMUNITY";
  readonly dataCenterId: string | null;
  readonly template: string | null;
  readonly cost: number;
  readonly locked: boolean;
  readonly globalNetworking: { readonly enabled: boolean };
  readonly runtime: {
    readonly uptime: number;
    readonly gpus: readonly { readonly util: number; readonly memoryUtil: number }[];
    readonly ports: readonly {
      readonly private: number;
      readonly public: number | null;
      readonly type: string;
      readonly ip: string | null;
    }[];
  } | null;
  readonly createdAt: string;
  readonly startedAt: string | null;
}

/** Hourly compute price of a pod in micro-USD (its GPU type's price for its cloud, times the count). */
export function computeMicroUsdPerHr(pod: PodRecord): number {
  const { gpuType, cloud, gpuCount } = pod.spec;
  const perGpu =
    cloud === "COMMUNITY" ? gpuType.communityPriceMicroUsdPerHr : gpuType.securePriceMicroUsdPerHr;
  return perGpu * gpuCount;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function renderPod(pod: PodRecord, nowMs: number): PodWire {
  const { spec } = pod;
  const running = pod.status === "RUNNING" && pod.startedAtMs !== undefined;
  return {
    id: pod.id,
    name: spec.name,
    image: spec.image,
    args: spec.args,
    disk: spec.disk,
    ports: [...spec.ports],
    env: { ...spec.env },
    registry: spec.registry,
    status: pod.status,
    actions: ALLOWED_ACTIONS[pod.status],
    mounts: spec.mounts,
    gpu: { id: spec.gpuType.id, count: spec.gpuCount },
    cloud: spec.cloud,
    dataCenterId: pod.dataCenterId,
    template: null,
    cost: holdsGpu(pod.status) ? computeMicroUsdPerHr(pod) / 1_000_000 : 0,
    locked: false,
    globalNetworking: { enabled: spec.globalNetworking },
    runtime: running
      ? {
          uptime: Math.floor((nowMs - (pod.startedAtMs ?? nowMs)) / 1000),
          gpus: Array.from({ length: spec.gpuCount }, () => ({ util: 0, memoryUtil: 0 })),
          ports: spec.ports.map((entry) => {
            const [port, type] = entry.split("/");
            return { private: Number(port), public: null, type: type ?? "http", ip: null };
          }),
        }
      : null,
    createdAt: iso(pod.createdAtMs),
    startedAt: pod.startedAtMs === undefined ? null : iso(pod.startedAtMs),
  };
}
