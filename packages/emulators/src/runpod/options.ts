/**
 * The Runpod emulator's options: public types, defaults and the checks made at start (limits with
 * their unit in the name, bounded). Defaults are plausible orders of magnitude for a 7–8B vLLM pod
 * (reference §8.4), shrunk where a virtual clock makes the size irrelevant.
 * Must not know: sockets, pods.
 */

import { DEFAULT_GPU_TYPES, type GpuTypeConfig } from "./catalog.js";
import type { LifecycleTimings } from "./control-plane.js";
import type { ErrorDialect } from "./problem.js";
import type { RateLimitQuotas } from "./rate-limit.js";

export interface RunpodEmulatorOptions {
  /** The account's API key: control-plane calls need `Authorization: Bearer <apiKey>`. */
  readonly apiKey: string;
  /** Serve HTTPS with this key and certificate (PEM). Without it, plain HTTP (unit tests only). */
  readonly tls?: { readonly key: string; readonly cert: string };
  /** Loopback only: "127.0.0.1" (default) or "::1". */
  readonly host?: "127.0.0.1" | "::1";
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** Base wall clock in ms; `advance(ms)` adds to it. Default: frozen at 2026-01-01T00:00:00Z. */
  readonly now?: () => number;
  /** GPU types, prices and free GPUs (default: five types of the reference's price table, 8 GPUs each). */
  readonly gpuTypes?: readonly GpuTypeConfig[];
  /** Lifecycle durations (see LifecycleTimings); each defaults as in DEFAULT_TIMINGS. */
  readonly timings?: Partial<LifecycleTimings>;
  /** The console's secret table, for `{{ RUNPOD_SECRET_<name> }}` references in pod env. */
  readonly secrets?: Readonly<Record<string, string>>;
  /** A referenced secret that does not exist: "error" (default: the pod ends in ERROR) or "empty". */
  readonly missingSecret?: "error" | "empty";
  /** Served model name for pods whose args name none (default "emulated-model"). */
  readonly defaultModel?: string;
  /** Per-key quotas per window (default 60 / 3000 / 50000, the spec's example). */
  readonly rateLimit?: RateLimitQuotas;
  /** Pods' engines: delay between streamed tokens (default 0). */
  readonly tokenDelayMs?: number;
  /** Seed of pod ids (default 1). */
  readonly seed?: number;
  /** Larger control-plane request bodies get 413 (default 1 MiB). */
  readonly maxBodyBytes?: number;
  /** Error shapes: "v2" (default: capacity is a 400 problem) or "v1" (capacity is a 500, §1.4). */
  readonly errorDialect?: ErrorDialect;
}

export const DEFAULT_TIMINGS: LifecycleTimings = {
  provisionMs: 5_000,
  imagePullMs: 60_000,
  modelLoadMs: 120_000,
  restartMs: 15_000,
  crashLoopUpMs: 20_000,
  crashLoopDownMs: 10_000,
  terminatedVisibleMs: 30_000,
};

export interface ResolvedRunpodOptions {
  readonly apiKey: string;
  readonly tls: { readonly key: string; readonly cert: string } | undefined;
  readonly host: "127.0.0.1" | "::1";
  readonly port: number;
  readonly gpuTypes: readonly GpuTypeConfig[];
  readonly timings: LifecycleTimings;
  readonly secrets: ReadonlyMap<string, string>;
  readonly missingSecret: "error" | "empty";
  readonly defaultModel: string;
  readonly rateLimit: RateLimitQuotas;
  readonly tokenDelayMs: number;
  readonly seed: number;
  readonly maxBodyBytes: number;
  readonly errorDialect: ErrorDialect;
}

function dialect(value: ErrorDialect | undefined): ErrorDialect {
  if (value === undefined) return "v2";
  if (value !== "v2" && value !== "v1") fail("errorDialect", `expected "v2" or "v1"`);
  return value;
}

function fail(path: string, problem: string): never {
  throw new RangeError(`runpod emulator option ${path}: ${problem}`);
}

function int(path: string, value: number | undefined, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    fail(path, `expected an integer in [${min}, ${max}], got ${String(value)}`);
  }
  return value;
}

export function resolveRunpodOptions(options: RunpodEmulatorOptions): ResolvedRunpodOptions {
  if (typeof options.apiKey !== "string" || options.apiKey.length < 8) {
    fail("apiKey", "expected a string of at least 8 characters");
  }
  const host = options.host ?? "127.0.0.1";
  if (host !== "127.0.0.1" && host !== "::1") fail("host", `loopback only ("127.0.0.1" or "::1")`);
  if (
    options.tls !== undefined &&
    (typeof options.tls.key !== "string" || typeof options.tls.cert !== "string")
  ) {
    fail("tls", "expected { key, cert } as PEM strings");
  }
  const timings = { ...DEFAULT_TIMINGS };
  for (const [name, value] of Object.entries(options.timings ?? {}) as [keyof LifecycleTimings, number][]) {
    if (!(name in DEFAULT_TIMINGS)) fail(`timings.${name}`, "unknown timing");
    timings[name] = int(`timings.${name}`, value, 0, 7 * 24 * 3_600_000, DEFAULT_TIMINGS[name]);
  }
  const missingSecret = options.missingSecret ?? "error";
  if (missingSecret !== "error" && missingSecret !== "empty")
    fail("missingSecret", `expected "error" or "empty"`);
  const secrets = new Map<string, string>();
  for (const [name, value] of Object.entries(options.secrets ?? {})) {
    if (!/^[A-Za-z0-9_.-]+$/.test(name) || typeof value !== "string") {
      fail(`secrets.${name}`, "expected a name of letters, digits, _ - . and a string value");
    }
    secrets.set(name, value);
  }
  const defaultModel = options.defaultModel ?? "emulated-model";
  if (!/^\S+$/.test(defaultModel)) fail("defaultModel", "expected a name without spaces");
  return {
    apiKey: options.apiKey,
    tls: options.tls,
    host,
    port: int("port", options.port, 0, 65535, 0),
    gpuTypes: options.gpuTypes ?? DEFAULT_GPU_TYPES,
    timings,
    secrets,
    missingSecret,
    defaultModel,
    rateLimit: options.rateLimit ?? {},
    tokenDelayMs: int("tokenDelayMs", options.tokenDelayMs, 0, 60_000, 0),
    seed: int("seed", options.seed, 0, 0xffffffff, 1),
    maxBodyBytes: int("maxBodyBytes", options.maxBodyBytes, 1, 64 * 1024 * 1024, 1024 * 1024),
    errorDialect: dialect(options.errorDialect),
  };
}
