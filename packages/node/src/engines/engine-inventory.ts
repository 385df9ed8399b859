/**
 * Local engines adopted by base URL, and what each serves. A periodic probe asks every engine for
 * its models (Ollama: GET /api/tags; OpenAI-compatible: GET <base>/models); an engine that fails a
 * probe leaves the inventory at once and comes back with its next good probe, so a dead engine is
 * gone within one probe interval. After a good listing the engine is asked its models' context
 * windows (context/window-probe.ts); a failure there leaves a window unknown, never the engine down.
 * Must not know: requests, scheduling, dialect translation.
 */

import type { Runtime, TimerHandle } from "@pair/cluster";
import type { Dialect } from "@pair/dialects";
import type { Dispatcher } from "undici";
import { WindowProber, type ContextTokensConfig, type ModelWindow } from "../context/index.js";
import { boundedText } from "../http/bounded-text.js";

/** An engine serves one of the dialects. */
export type EngineApi = Dialect;

export interface EngineSpec {
  readonly name: string;
  readonly api: EngineApi;
  /** Ollama: the host (`http://127.0.0.1:11435`); OpenAI: the API root ending in `/v1`. */
  readonly baseUrl: string;
  readonly maxConcurrent: number;
  readonly probeIntervalMs: number;
  /** First-byte timeout for requests routed to this engine. */
  readonly firstByteTimeoutMs: number;
  /** `context_tokens`: overrides the windows the engine states (one number, or by model). */
  readonly contextTokens?: ContextTokensConfig;
  /** Ollama `num_ctx: auto` (default): PAIR may raise num_ctx so a prompt fits; false: `off`. */
  readonly raiseNumCtx?: boolean;
}

/**
 * What an engine's model listing said of one model, kept so the client API can pass it on
 * (OpenAI: `created`, `owned_by`, vLLM's `max_model_len`; Ollama: size, digest, date, details).
 */
export interface EngineModelMeta {
  readonly created?: number;
  readonly ownedBy?: string;
  readonly maxModelLen?: number;
  readonly size?: number;
  readonly digest?: string;
  readonly modifiedAt?: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

export interface EngineState {
  readonly spec: EngineSpec;
  readonly healthy: boolean;
  readonly models: readonly string[];
  /** By model, what the last good probe's listing said of it; absent: nothing known. */
  readonly meta?: ReadonlyMap<string, EngineModelMeta>;
  /** By model, its context window, where known (context/model-window.ts). */
  readonly windows?: ReadonlyMap<string, ModelWindow>;
  readonly lastProbeAtMs: number | undefined;
  readonly lastError: string | undefined;
}

export interface InventoryOptions {
  readonly engines: readonly EngineSpec[];
  readonly dispatcher: Dispatcher;
  /** Its wall time stamps each probe; its timers repeat the probes. */
  readonly runtime: Runtime;
  /** Called after every probe round that changed something (for logs and metrics). */
  readonly onChange?: (engines: readonly EngineState[]) => void;
}

/** The URL of an engine route: Ollama paths hang off the host, OpenAI paths off the /v1 root. */
export function engineUrl(spec: Pick<EngineSpec, "baseUrl">, path: string): URL {
  const base = spec.baseUrl.endsWith("/") ? spec.baseUrl : `${spec.baseUrl}/`;
  return new URL(path.replace(/^\//, ""), base);
}

/** Where a request for an engine route goes, as undici's `request` takes it. */
export interface EngineTarget {
  readonly origin: string;
  readonly path: string;
}

/** Base URLs whose parsed routes are remembered (then it starts over): engines and peers are few. */
const MAX_REMEMBERED_BASE_URLS = 256;
const targets = new Map<string, Map<string, EngineTarget>>();

/** `engineUrl` as origin and path, parsed once per base URL and route rather than per request. */
export function engineTarget(baseUrl: string, path: string): EngineTarget {
  let routes = targets.get(baseUrl);
  if (routes === undefined) {
    if (targets.size >= MAX_REMEMBERED_BASE_URLS) targets.clear();
    targets.set(baseUrl, (routes = new Map<string, EngineTarget>()));
  }
  let target = routes.get(path);
  if (target === undefined) {
    const url = engineUrl({ baseUrl }, path);
    routes.set(path, (target = { origin: url.origin, path: url.pathname }));
  }
  return target;
}

export class EngineInventory {
  readonly #o: InventoryOptions;
  #states: EngineState[];
  #models: ReadonlyMap<string, readonly string[]> | undefined;
  /** Healthy engines by model, rebuilt when the states change (not per request). */
  #serving: Map<string, readonly EngineState[]> | undefined;
  #timer: TimerHandle | undefined;
  #probing: Promise<void> | undefined;
  /** Probes in a row that timed out, by engine. */
  readonly #slowProbes = new Map<string, number>();
  readonly #windows: WindowProber;

  constructor(options: InventoryOptions) {
    const names = new Set<string>();
    for (const e of options.engines) {
      if (names.has(e.name)) throw new RangeError(`engine ${e.name}: duplicate name`);
      names.add(e.name);
      if (!(e.probeIntervalMs > 0)) throw new RangeError(`engine ${e.name}: probeIntervalMs must be > 0`);
    }
    this.#o = options;
    this.#windows = new WindowProber(options.dispatcher);
    this.#states = options.engines.map((spec) => ({
      spec,
      healthy: false,
      models: [],
      lastProbeAtMs: undefined,
      lastError: "not probed yet",
    }));
  }

  get engines(): readonly EngineState[] {
    return this.#states;
  }

  /** Healthy engines that advertise exactly this model tag, in config order. */
  serving(model: string): readonly EngineState[] {
    if (this.#serving === undefined) {
      const index = new Map<string, EngineState[]>();
      for (const s of this.#states)
        if (s.healthy)
          for (const m of new Set(s.models)) {
            const list = index.get(m);
            if (list === undefined) index.set(m, [s]);
            else list.push(s);
          }
      this.#serving = index;
    }
    return this.#serving.get(model) ?? [];
  }

  /** Every model some healthy engine serves, with the engines serving it (rebuilt only on change). */
  models(): ReadonlyMap<string, readonly string[]> {
    if (this.#models !== undefined) return this.#models;
    const out = new Map<string, string[]>();
    for (const s of this.#states)
      if (s.healthy) for (const m of s.models) out.set(m, [...(out.get(m) ?? []), s.spec.name]);
    this.#models = out;
    return out;
  }

  /** Mark an engine down now (a request to it failed to connect); the next probe may revive it. */
  markDown(name: string, error: string): void {
    this.#states = this.#states.map((s) =>
      s.spec.name === name ? { ...s, healthy: false, lastError: error } : s,
    );
    this.#serving = undefined;
    this.#o.onChange?.(this.#states);
  }

  /** Probe every engine once, concurrently. */
  probeOnce(): Promise<void> {
    this.#probing ??= Promise.all(this.#states.map((s) => this.#probe(s.spec))).then((next) => {
      const changed = next.some((n, i) => {
        const before = this.#states[i];
        return (
          before === undefined ||
          before.healthy !== n.healthy ||
          before.lastError !== n.lastError ||
          before.models.join("\n") !== n.models.join("\n") ||
          windowsKey(before.windows) !== windowsKey(n.windows)
        );
      });
      this.#states = next;
      this.#serving = undefined;
      if (changed) this.#models = undefined;
      this.#probing = undefined;
      if (changed) this.#o.onChange?.(next);
    });
    return this.#probing;
  }

  /** Probe now, then every engine's interval (the shortest, for simplicity). */
  async start(): Promise<void> {
    await this.probeOnce();
    const interval = Math.min(...this.#states.map((s) => s.spec.probeIntervalMs), 60_000);
    if (this.#states.length > 0) {
      this.#timer = this.#o.runtime.timers.every(() => void this.probeOnce(), interval);
    }
  }

  stop(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  async #probe(spec: EngineSpec): Promise<EngineState> {
    const at = this.#o.runtime.clock.now().wallMs;
    const path = spec.api === "ollama" ? "/api/tags" : "/models";
    // At least a second: a busy event loop (a large body being parsed) must not look like a dead engine.
    const timeoutMs = Math.min(Math.max(spec.probeIntervalMs, 1_000), 5_000);
    try {
      const res = await this.#o.dispatcher.request({
        origin: engineUrl(spec, path).origin,
        path: engineUrl(spec, path).pathname,
        method: "GET",
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new Error(`HTTP ${res.statusCode} from ${path}`);
      }
      const text = await boundedText(res.body);
      const { models, meta } = parseModels(spec.api, JSON.parse(text) as unknown);
      this.#slowProbes.set(spec.name, 0);
      const windows = await this.#windows.probe(spec, models, meta);
      return { spec, healthy: true, models, meta, windows, lastProbeAtMs: at, lastError: undefined };
    } catch (cause) {
      const message = cause instanceof Error ? cause.message : String(cause);
      // One slow answer from an engine that was up is not enough to take it out (it may be busy
      // generating); a second one in a row is. A refused connection or an error answer counts at once.
      const before = this.#states.find((s) => s.spec.name === spec.name);
      const slow = isTimeout(cause);
      const strikes = slow ? (this.#slowProbes.get(spec.name) ?? 0) + 1 : 0;
      this.#slowProbes.set(spec.name, strikes);
      if (slow && strikes < 2 && before?.healthy === true) return { ...before, lastProbeAtMs: at };
      return { spec, healthy: false, models: [], lastProbeAtMs: at, lastError: message };
    }
  }
}

/** A comparable text of an engine's windows (a change is worth telling peers). */
function windowsKey(windows: ReadonlyMap<string, ModelWindow> | undefined): string {
  if (windows === undefined) return "";
  let key = "";
  for (const [model, w] of windows) key += `${model}=${w.tokens}/${w.runningTokens ?? ""};`;
  return key;
}

function isTimeout(cause: unknown): boolean {
  const name = (cause as { name?: unknown } | null)?.name;
  const code = (cause as { code?: unknown } | null)?.code;
  return (
    name === "TimeoutError" ||
    name === "AbortError" ||
    code === "UND_ERR_HEADERS_TIMEOUT" ||
    code === "UND_ERR_BODY_TIMEOUT"
  );
}

interface ParsedListing {
  readonly models: string[];
  readonly meta: Map<string, EngineModelMeta>;
}

function parseModels(api: EngineApi, body: unknown): ParsedListing {
  const v = (body as Record<string, unknown> | null)?.[api === "ollama" ? "models" : "data"];
  if (!Array.isArray(v))
    throw new Error(`model list: expected "${api === "ollama" ? "models" : "data"}" to be an array`);
  const models: string[] = [];
  const meta = new Map<string, EngineModelMeta>();
  for (const item of v as unknown[]) {
    const entry = (typeof item === "object" && item !== null ? item : {}) as Record<string, unknown>;
    const name = api === "ollama" ? (entry["name"] ?? entry["model"]) : entry["id"];
    if (typeof name !== "string" || name.length === 0) continue;
    models.push(name);
    meta.set(name, api === "ollama" ? ollamaMeta(entry) : openaiMeta(entry));
  }
  return { models, meta };
}

/** Only fields of the expected type are kept: an engine's listing is not trusted to be well formed. */
function openaiMeta(entry: Record<string, unknown>): EngineModelMeta {
  const { created, owned_by: ownedBy, max_model_len: maxModelLen } = entry;
  return {
    ...(isCount(created) ? { created } : {}),
    ...(typeof ownedBy === "string" && ownedBy !== "" ? { ownedBy } : {}),
    ...(isCount(maxModelLen) && maxModelLen > 0 ? { maxModelLen } : {}),
  };
}

function ollamaMeta(entry: Record<string, unknown>): EngineModelMeta {
  const { size, digest, modified_at: modifiedAt, details } = entry;
  return {
    ...(isCount(size) ? { size } : {}),
    ...(typeof digest === "string" && digest !== "" ? { digest } : {}),
    ...(typeof modifiedAt === "string" && !Number.isNaN(Date.parse(modifiedAt)) ? { modifiedAt } : {}),
    ...(typeof details === "object" && details !== null && !Array.isArray(details)
      ? { details: details as Record<string, unknown> }
      : {}),
  };
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}
