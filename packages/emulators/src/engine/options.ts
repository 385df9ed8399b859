/**
 * The engine emulator's options: public types, defaults, and the checks made at start (every
 * limit bounded, with its unit in the name). Also the emulator's clock seam.
 * Knows nothing of sockets or wire formats; faults are typed and checked in faults.ts.
 */

import type { IncomingHttpHeaders } from "node:http";
import type { EngineFaults } from "./faults.js";

/** Which wire dialects the emulator serves. "both" is what Ollama does (it also serves /v1). */
export type EngineApi = "openai" | "ollama" | "both";

/**
 * Which OpenAI-compatible server the emulator plays (its listing, window routes, tokenizer and
 * context-overflow refusal): vLLM (default), llama.cpp's server, or TGI.
 */
export type OpenAiFlavor = "vllm" | "llamacpp" | "tgi";

/** What happens to a request arriving while every slot is taken. */
export type WhenFull = "queue" | "503";

export interface EngineModelConfig {
  readonly name: string;
  /** Completion tokens produced when the request sets no limit (default 16). */
  readonly maxTokens?: number;
  /** Length of this model's embedding vectors (default 16). */
  readonly embeddingDimensions?: number;
  /**
   * The model's context window (default 1,048,576): vLLM `max_model_len`, llama.cpp `n_ctx`, TGI
   * `max_total_tokens`, Ollama's trained `context_length`. A longer prompt is refused (OpenAI
   * flavors) or, on Ollama, cut to `numCtx`.
   */
  readonly contextTokens?: number;
  /**
   * Ollama: the `num_ctx` the model runs with unless a request sets `options.num_ctx` (default
   * min(contextTokens, 4096)); when set it is also the Modelfile's `num_ctx` in /api/show.
   */
  readonly numCtx?: number;
  /** What Ollama's /api/show reports the model can do (default `["completion"]`). */
  readonly capabilities?: readonly string[];
  /** The chat template Ollama's /api/show reports (default `{{ .Prompt }}`). */
  readonly template?: string;
}

/** Tokens of one generation answered in full (what a per-token biller charges). */
export interface EngineUsage {
  readonly model: string;
  readonly promptTokens: number;
  readonly completionTokens: number;
}

/** Called once per generation answered in full, with the request's headers (who asked). */
export type UsageListener = (usage: EngineUsage, request: { readonly headers: IncomingHttpHeaders }) => void;

/** Time as the emulator reads it: wall time for `created` stamps, monotonic time for durations. */
export interface EmulatorClock {
  now(): { readonly wallMs: number; readonly monoMs: number };
}

export interface EngineEmulatorOptions {
  readonly api: EngineApi;
  /** With `api: "openai"`: which server it plays (default "vllm"). */
  readonly flavor?: OpenAiFlavor;
  /** Model names, or configs. At least one. */
  readonly models: readonly (string | EngineModelConfig)[];
  /** Reported in the `server` header of every response (default "engine-emulator"). */
  readonly name?: string;
  /** Loopback only: "127.0.0.1" (default) or "::1". */
  readonly host?: "127.0.0.1" | "::1";
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** Serve HTTPS with this key and certificate (PEM) instead of HTTP. */
  readonly tls?: { readonly key: string; readonly cert: string };
  /** Delay between tokens (default 0). */
  readonly tokenDelayMs?: number;
  /** Delay before the first token, after a slot is granted (default 0). Headers go out with it. */
  readonly firstTokenDelayMs?: number;
  /** Requests generating at once (default 256). Model listings never wait for a slot. */
  readonly maxConcurrent?: number;
  /** "queue" (default): wait in FIFO order; "503": refuse at once. */
  readonly whenFull?: WhenFull;
  /** With "queue": requests allowed to wait; the next one gets 503 (default 1024). */
  readonly maxQueued?: number;
  /** Larger request bodies get 413 (default 8 MiB). */
  readonly maxBodyBytes?: number;
  /** Faults active from the start; `setFaults` replaces them at run time. */
  readonly faults?: EngineFaults;
  /** Default: the system clock. */
  readonly clock?: EmulatorClock;
  /** What `GET /api/version` reports (default "0.12.6"). */
  readonly ollamaVersion?: string;
  /**
   * vLLM's `--api-key`: when set (one key or several), every `/v1…` request must carry
   * `Authorization: Bearer <one of them>`, else 401 `{"error":"Unauthorized"}`. Other paths
   * (`/health`, Ollama's `/api/…`) and OPTIONS stay open, as in vLLM.
   */
  readonly apiKey?: string | readonly string[];
  /** Told of every generation answered in full (embeddings are not generations). */
  readonly onUsage?: UsageListener;
  /**
   * Answer embeddings as floats whatever `encoding_format` asked, as some OpenAI-compatible
   * servers do (default false: vLLM honours it).
   */
  readonly ignoreEncodingFormat?: boolean;
}

export interface ResolvedModel {
  readonly name: string;
  readonly maxTokens: number;
  readonly embeddingDimensions: number;
  readonly contextTokens: number;
  /** Ollama's running `num_ctx` by default. */
  readonly numCtx: number;
  /** `numCtx` was configured: /api/show reports it as the Modelfile's. */
  readonly modelfileNumCtx: boolean;
  readonly capabilities: readonly string[];
  readonly template: string;
}

export interface ResolvedOptions {
  readonly api: EngineApi;
  readonly flavor: OpenAiFlavor;
  readonly models: readonly ResolvedModel[];
  readonly name: string;
  readonly host: "127.0.0.1" | "::1";
  readonly port: number;
  readonly tls: { readonly key: string; readonly cert: string } | undefined;
  readonly tokenDelayMs: number;
  readonly firstTokenDelayMs: number;
  readonly maxConcurrent: number;
  readonly whenFull: WhenFull;
  readonly maxQueued: number;
  readonly maxBodyBytes: number;
  readonly clock: EmulatorClock;
  readonly ollamaVersion: string;
  /** Accepted `--api-key` values; empty means no auth. */
  readonly apiKeys: readonly string[];
  readonly onUsage: UsageListener | undefined;
  readonly ignoreEncodingFormat: boolean;
}

/** A refused option, naming its path (e.g. `models[1].maxTokens`). */
export class EmulatorOptionError extends Error {
  readonly code = "invalid_emulator_option";
  constructor(
    readonly path: string,
    problem: string,
  ) {
    super(`engine emulator option ${path}: ${problem}`);
    this.name = "EmulatorOptionError";
  }
}

export const systemClock: EmulatorClock = {
  now: () => ({ wallMs: Date.now(), monoMs: performance.now() }),
};

/** An integer in [min, max], or the default when absent. */
export function checkedInt(
  path: string,
  value: number | undefined,
  min: number,
  max: number,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new EmulatorOptionError(path, `expected an integer in [${min}, ${max}], got ${String(value)}`);
  }
  return value;
}

function resolveModel(entry: string | EngineModelConfig, index: number): ResolvedModel {
  const config: EngineModelConfig = typeof entry === "string" ? { name: entry } : entry;
  const path = `models[${index}]`;
  if (typeof config.name !== "string" || !/^\S+$/.test(config.name)) {
    throw new EmulatorOptionError(`${path}.name`, "expected a non-empty name without spaces");
  }
  const contextTokens = checkedInt(`${path}.contextTokens`, config.contextTokens, 1, 1 << 30, 1 << 20);
  return {
    name: config.name,
    maxTokens: checkedInt(
      `${path}.maxTokens`,
      config.maxTokens,
      0,
      contextTokens,
      Math.min(16, contextTokens),
    ),
    embeddingDimensions: checkedInt(`${path}.embeddingDimensions`, config.embeddingDimensions, 1, 8192, 16),
    contextTokens,
    numCtx: checkedInt(`${path}.numCtx`, config.numCtx, 4, contextTokens, Math.min(contextTokens, 4096)),
    modelfileNumCtx: config.numCtx !== undefined,
    capabilities: config.capabilities ?? ["completion"],
    template: config.template ?? "{{ .Prompt }}",
  };
}

/** Applies defaults and checks every option; throws EmulatorOptionError naming the first bad one. */
export function resolveOptions(options: EngineEmulatorOptions): ResolvedOptions {
  if (options.api !== "openai" && options.api !== "ollama" && options.api !== "both") {
    throw new EmulatorOptionError("api", `expected "openai", "ollama" or "both", got ${String(options.api)}`);
  }
  if (!Array.isArray(options.models) || options.models.length === 0) {
    throw new EmulatorOptionError("models", "expected at least one model");
  }
  const models = options.models.map(resolveModel);
  const seen = new Set<string>();
  for (const [index, model] of models.entries()) {
    if (seen.has(model.name))
      throw new EmulatorOptionError(`models[${index}].name`, `duplicate "${model.name}"`);
    seen.add(model.name);
  }
  const host = options.host ?? "127.0.0.1";
  if (host !== "127.0.0.1" && host !== "::1") {
    throw new EmulatorOptionError(
      "host",
      `the emulator binds loopback only ("127.0.0.1" or "::1"), got ${String(host)}`,
    );
  }
  const whenFull = options.whenFull ?? "queue";
  if (whenFull !== "queue" && whenFull !== "503") {
    throw new EmulatorOptionError("whenFull", `expected "queue" or "503", got ${String(whenFull)}`);
  }
  if (
    options.tls !== undefined &&
    (typeof options.tls.key !== "string" || typeof options.tls.cert !== "string")
  ) {
    throw new EmulatorOptionError("tls", "expected { key, cert } as PEM strings");
  }
  const flavor = options.flavor ?? "vllm";
  if (flavor !== "vllm" && flavor !== "llamacpp" && flavor !== "tgi")
    throw new EmulatorOptionError("flavor", `expected "vllm", "llamacpp" or "tgi", got ${String(flavor)}`);
  return {
    api: options.api,
    flavor,
    models,
    name: options.name ?? "engine-emulator",
    host,
    port: checkedInt("port", options.port, 0, 65535, 0),
    tls: options.tls,
    tokenDelayMs: checkedInt("tokenDelayMs", options.tokenDelayMs, 0, 60_000, 0),
    firstTokenDelayMs: checkedInt("firstTokenDelayMs", options.firstTokenDelayMs, 0, 3_600_000, 0),
    maxConcurrent: checkedInt("maxConcurrent", options.maxConcurrent, 1, 100_000, 256),
    whenFull,
    maxQueued: checkedInt("maxQueued", options.maxQueued, 0, 1_000_000, 1024),
    maxBodyBytes: checkedInt("maxBodyBytes", options.maxBodyBytes, 1, 256 * 1024 * 1024, 8 * 1024 * 1024),
    clock: options.clock ?? systemClock,
    ollamaVersion: options.ollamaVersion ?? "0.12.6",
    apiKeys: resolveApiKeys(options.apiKey),
    onUsage: options.onUsage,
    ignoreEncodingFormat: options.ignoreEncodingFormat ?? false,
  };
}

function resolveApiKeys(apiKey: string | readonly string[] | undefined): readonly string[] {
  if (apiKey === undefined) return [];
  const keys: readonly unknown[] = typeof apiKey === "string" ? [apiKey] : apiKey;
  if (
    !Array.isArray(keys) ||
    keys.length === 0 ||
    keys.some((key) => typeof key !== "string" || key === "")
  ) {
    throw new EmulatorOptionError("apiKey", "expected a non-empty string or a non-empty array of them");
  }
  return keys as readonly string[];
}
