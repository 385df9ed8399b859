/**
 * Options of the Hugging Face emulator: TLS, virtual time (start instant, optional real-time
 * scale), lifecycle durations, the offered hardware, catalog and router models, initial tokens, and
 * the pacing of the endpoints' engines; defaults and checks (every limit bounded, unit in the name).
 * Must not know: sockets, routes, states.
 */

import { EmulatorOptionError, checkedInt } from "../engine/options.js";
import { DEFAULT_CATALOG, DEFAULT_HARDWARE, type CatalogItem, type ComputeOption } from "./hardware.js";
import { DEFAULT_ROUTER_MODELS, type RouterModel } from "./inference-router.js";
import type { TokenGrant } from "./tokens.js";
import type { LifecycleTimings } from "./world.js";
import type { JobsEmulatorOptions } from "../huggingface-jobs/jobs-service.js";

export interface HuggingFaceEmulatorOptions {
  /** Serve HTTPS with this key and certificate (PEM). Without it: plain HTTP (in-process tests only). */
  readonly tls?: { readonly key: string; readonly cert: string };
  /** 0 (default) picks a free port on 127.0.0.1. */
  readonly port?: number;
  /** Virtual wall time at start, epoch ms (default 2026-08-01T00:00:00Z). */
  readonly startMs?: number;
  /** 0 (default): time moves only with `advance(ms)`. > 0: also this many virtual ms per real ms. */
  readonly timeScale?: number;
  /** Lifecycle durations in virtual ms (defaults: pending 30 s, initializing 120 s, scale-up 60 s, updating 60 s). */
  readonly timings?: Partial<LifecycleTimings>;
  readonly hardware?: readonly ComputeOption[];
  readonly catalog?: readonly CatalogItem[];
  readonly routerModels?: readonly RouterModel[];
  /** Tokens known from the start: token → grant. More with `tokens.add`. */
  readonly tokens?: Readonly<Record<string, TokenGrant>>;
  /** Seed of the endpoints' URL labels (default 1). */
  readonly seed?: number;
  /** Hugging Face Jobs: timings, flavors, page size (checked when the server starts). */
  readonly jobs?: JobsEmulatorOptions;
  /** Pacing of every endpoint's (and the router's) engine, in real ms. */
  readonly engine?: {
    readonly tokenDelayMs?: number;
    readonly firstTokenDelayMs?: number;
    /** Completion tokens when a request sets no limit (default 16). */
    readonly maxTokens?: number;
  };
}

export interface ResolvedHfOptions {
  readonly tls: { readonly key: string; readonly cert: string } | undefined;
  readonly port: number;
  readonly startMs: number;
  readonly timeScale: number;
  readonly timings: LifecycleTimings;
  readonly hardware: readonly ComputeOption[];
  readonly catalog: readonly CatalogItem[];
  readonly routerModels: readonly RouterModel[];
  readonly tokens: Readonly<Record<string, TokenGrant>>;
  readonly seed: number;
  readonly jobs: JobsEmulatorOptions | undefined;
  readonly tokenDelayMs: number;
  readonly firstTokenDelayMs: number;
  readonly maxTokens: number;
}

const DAY_MS = 24 * 3_600_000;

export function resolveHfOptions(options: HuggingFaceEmulatorOptions): ResolvedHfOptions {
  if (
    options.tls !== undefined &&
    (typeof options.tls.key !== "string" || typeof options.tls.cert !== "string")
  )
    throw new EmulatorOptionError("tls", "expected { key, cert } as PEM strings");
  const timeScale = options.timeScale ?? 0;
  if (!(timeScale >= 0 && timeScale <= 1_000_000))
    throw new EmulatorOptionError("timeScale", `expected a number in [0, 1000000], got ${String(timeScale)}`);
  const hardware = options.hardware ?? DEFAULT_HARDWARE;
  if (hardware.length === 0)
    throw new EmulatorOptionError("hardware", "expected at least one compute option");
  hardware.forEach((option, index) => {
    if (!(option.pricePerHour >= 0))
      throw new EmulatorOptionError(`hardware[${index}].pricePerHour`, "expected a price >= 0");
  });
  const timings = options.timings ?? {};
  return {
    tls: options.tls,
    port: checkedInt("port", options.port, 0, 65535, 0),
    startMs: checkedInt("startMs", options.startMs, 0, 8.64e15, Date.UTC(2026, 7, 1)),
    timeScale,
    timings: {
      pendingMs: checkedInt("timings.pendingMs", timings.pendingMs, 0, DAY_MS, 30_000),
      initializingMs: checkedInt("timings.initializingMs", timings.initializingMs, 0, DAY_MS, 120_000),
      scaleUpMs: checkedInt("timings.scaleUpMs", timings.scaleUpMs, 0, DAY_MS, 60_000),
      updatingMs: checkedInt("timings.updatingMs", timings.updatingMs, 0, DAY_MS, 60_000),
    },
    hardware,
    catalog: options.catalog ?? DEFAULT_CATALOG,
    routerModels: options.routerModels ?? DEFAULT_ROUTER_MODELS,
    tokens: options.tokens ?? {},
    seed: checkedInt("seed", options.seed, 0, 0xffffffff, 1),
    jobs: options.jobs,
    tokenDelayMs: checkedInt("engine.tokenDelayMs", options.engine?.tokenDelayMs, 0, 60_000, 0),
    firstTokenDelayMs: checkedInt(
      "engine.firstTokenDelayMs",
      options.engine?.firstTokenDelayMs,
      0,
      3_600_000,
      0,
    ),
    maxTokens: checkedInt("engine.maxTokens", options.engine?.maxTokens, 0, 1 << 20, 16),
  };
}
