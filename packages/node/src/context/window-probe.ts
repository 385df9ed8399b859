/**
 * Asking a local engine for its models' context windows, after each good model listing:
 * - Ollama: `GET /api/ps` (the window each loaded model runs with) every time, and `POST /api/show`
 *   per model (its trained window and a Modelfile `num_ctx`) once per model and digest;
 * - an OpenAI-compatible engine: vLLM's `max_model_len` came with the listing; otherwise the engine
 *   is asked once per model list what it is: llama.cpp (`GET /props`), TGI (`GET /info`), LM Studio
 *   (`GET /api/v0/models`), or none of them (no window known, unless configured).
 * A configured `context_tokens` wins over what the engine says (for Ollama it caps the window PAIR
 * may raise `num_ctx` to). A failed question leaves that window unknown; it never marks the engine down.
 * Must not know: routing, the inventory's health rules.
 */

import type { Dispatcher } from "undici";
import { boundedText } from "../http/bounded-text.js";
import {
  configuredWindow,
  llamaCppPropsWindow,
  lmStudioWindow,
  ollamaPsWindows,
  ollamaShowWindow,
  ollamaWindow,
  plainWindow,
  tgiInfoWindow,
  type ContextTokensConfig,
  type ModelWindow,
} from "./model-window.js";
import { engineRoot } from "./tokenize.js";

export interface WindowProbeSpec {
  readonly name: string;
  readonly api: "ollama" | "openai";
  readonly baseUrl: string;
  readonly contextTokens?: ContextTokensConfig;
  /** Ollama: PAIR may raise `num_ctx` per request (default true). */
  readonly raiseNumCtx?: boolean;
}

/** What the listing said of a model that matters here. */
export interface ListedModel {
  readonly maxModelLen?: number;
  readonly digest?: string;
}

/** Most models whose `/api/show` is asked in one probe (the rest wait for the next). */
const MAX_SHOWS_PER_PROBE = 16;

type Flavor =
  | { readonly kind: "llamacpp"; readonly nCtx: number }
  | { readonly kind: "tgi"; readonly total: number; readonly input?: number }
  | { readonly kind: "lmstudio"; readonly windows: ReadonlyMap<string, number> }
  | { readonly kind: "none" };

export class WindowProber {
  readonly #dispatcher: Dispatcher;
  readonly #timeoutMs: number;
  /** Ollama `/api/show` answers by engine, model and digest. */
  readonly #shown = new Map<string, { trained?: number; modelfileNumCtx?: number }>();
  /** An OpenAI engine's kind, by engine, for one model list. */
  readonly #flavors = new Map<string, { readonly key: string; readonly flavor: Flavor }>();

  constructor(dispatcher: Dispatcher, timeoutMs = 2_000) {
    this.#dispatcher = dispatcher;
    this.#timeoutMs = timeoutMs;
  }

  async probe(
    spec: WindowProbeSpec,
    models: readonly string[],
    listed: ReadonlyMap<string, ListedModel>,
  ): Promise<Map<string, ModelWindow>> {
    return spec.api === "ollama" ? this.#ollama(spec, models, listed) : this.#openai(spec, models, listed);
  }

  async #ollama(
    spec: WindowProbeSpec,
    models: readonly string[],
    listed: ReadonlyMap<string, ListedModel>,
  ): Promise<Map<string, ModelWindow>> {
    const loaded = ollamaPsWindows(await this.#json(spec.baseUrl, "/api/ps", "GET"));
    const out = new Map<string, ModelWindow>();
    let shows = 0;
    for (const model of models) {
      const key = `${spec.name}\u0000${model}\u0000${listed.get(model)?.digest ?? ""}`;
      let shown = this.#shown.get(key);
      if (shown === undefined && shows < MAX_SHOWS_PER_PROBE) {
        shows += 1;
        const body = await this.#json(spec.baseUrl, "/api/show", "POST", { model });
        if (body !== undefined) this.#shown.set(key, (shown = ollamaShowWindow(body)));
      }
      const override = configuredWindow(spec.contextTokens, model);
      const window = ollamaWindow({
        ...shown,
        ...(loaded.has(model) ? { loadedNumCtx: loaded.get(model)! } : {}),
        ...(override === undefined ? {} : { override }),
        raise: spec.raiseNumCtx !== false,
      });
      if (window !== undefined) out.set(model, window);
    }
    return out;
  }

  async #openai(
    spec: WindowProbeSpec,
    models: readonly string[],
    listed: ReadonlyMap<string, ListedModel>,
  ): Promise<Map<string, ModelWindow>> {
    const out = new Map<string, ModelWindow>();
    const vllm = models.some((m) => listed.get(m)?.maxModelLen !== undefined);
    const flavor = vllm ? undefined : await this.#flavor(spec, models);
    for (const model of models) {
      const override = configuredWindow(spec.contextTokens, model);
      const stated = vllm ? vllmWindow(listed.get(model)) : flavorWindow(flavor, model);
      if (override !== undefined)
        out.set(model, {
          ...(stated?.tokenizer === undefined ? {} : { tokenizer: stated.tokenizer }),
          tokens: override,
          source: "config",
        });
      else if (stated !== undefined) out.set(model, stated);
    }
    return out;
  }

  async #flavor(spec: WindowProbeSpec, models: readonly string[]): Promise<Flavor> {
    const key = models.join("\n");
    const known = this.#flavors.get(spec.name);
    if (known?.key === key) return known.flavor;
    const root = engineRoot(spec.baseUrl);
    let flavor: Flavor = { kind: "none" };
    const nCtx = llamaCppPropsWindow(await this.#json(root, "/props", "GET"));
    if (nCtx !== undefined) flavor = { kind: "llamacpp", nCtx };
    else {
      const tgi = tgiInfoWindow(await this.#json(root, "/info", "GET"));
      if (tgi !== undefined) flavor = { kind: "tgi", ...tgi };
      else {
        const lm = (await this.#json(root, "/api/v0/models", "GET")) as { data?: unknown } | undefined;
        const windows = new Map<string, number>();
        if (Array.isArray(lm?.data))
          for (const entry of lm.data as { id?: unknown }[]) {
            const w = lmStudioWindow(entry);
            if (typeof entry.id === "string" && w !== undefined) windows.set(entry.id, w);
          }
        if (windows.size > 0) flavor = { kind: "lmstudio", windows };
      }
    }
    this.#flavors.set(spec.name, { key, flavor });
    return flavor;
  }

  /** The parsed JSON answer of one route, or undefined for any failure. */
  async #json(base: string, path: string, method: "GET" | "POST", body?: unknown): Promise<unknown> {
    const url = new URL(`${base.replace(/\/+$/, "")}${path}`);
    try {
      const res = await this.#dispatcher.request({
        origin: url.origin,
        path: url.pathname,
        method,
        ...(body === undefined
          ? {}
          : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        return undefined;
      }
      return JSON.parse(await boundedText(res.body)) as unknown;
    } catch {
      return undefined;
    }
  }
}

function vllmWindow(listed: ListedModel | undefined): ModelWindow | undefined {
  return listed?.maxModelLen === undefined
    ? undefined
    : plainWindow(listed.maxModelLen, "max_model_len", "vllm");
}

function flavorWindow(flavor: Flavor | undefined, model: string): ModelWindow | undefined {
  switch (flavor?.kind) {
    case undefined:
    case "none":
      return undefined;
    case "llamacpp":
      return plainWindow(flavor.nCtx, "n_ctx", "llamacpp");
    case "tgi":
      return {
        tokens: flavor.total,
        ...(flavor.input === undefined ? {} : { maxInputTokens: flavor.input }),
        source: "tgi_info",
        tokenizer: "tgi",
      };
    case "lmstudio": {
      const w = flavor.windows.get(model);
      return w === undefined ? undefined : plainWindow(w, "lmstudio");
    }
  }
}
