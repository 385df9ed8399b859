/**
 * What a rented node answers on `GET <base>/models`, with the sponsor's token or without it: its
 * models and, for Inference Providers, each model's per-million-token prices; 503 is "warming"
 * (loading, scaled to zero), 401/403 a refused credential, anything else a failure with its reason.
 * Must not know: node states, routing, where the token came from.
 */

import { request, type Dispatcher } from "undici";
import type { Redacted } from "@pair/cluster";
import { boundedText } from "./bounded-text.js";

/** USD per million tokens. */
export interface TokenPrices {
  readonly input: number;
  readonly output: number;
}

export type ModelsAnswer =
  | {
      readonly kind: "models";
      readonly models: string[];
      readonly prices: Map<string, TokenPrices>;
      /** context: each model's window, where the listing says (vLLM `max_model_len`, the router's `context_length`). */
      readonly windows: Map<string, number>;
    }
  | { readonly kind: "warming" }
  | { readonly kind: "rejected"; readonly status: number }
  | { readonly kind: "failed"; readonly detail: string };

/** Ask a node's `/models` (with `token`, or without one to see whether it is open). Never throws. */
export async function listModels(
  dispatcher: Dispatcher,
  baseUrl: string,
  token: Redacted<string> | undefined,
  timeoutMs: number,
): Promise<ModelsAnswer> {
  try {
    const res = await request(`${baseUrl.replace(/\/$/, "")}/models`, {
      dispatcher,
      headers: token === undefined ? {} : { authorization: `Bearer ${token.reveal()}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (res.statusCode !== 200) await res.body.dump();
    const text = res.statusCode === 200 ? await boundedText(res.body) : "";
    if (res.statusCode === 401 || res.statusCode === 403) return { kind: "rejected", status: res.statusCode };
    if (res.statusCode === 503) return { kind: "warming" };
    if (res.statusCode !== 200) return { kind: "failed", detail: `GET /models answered ${res.statusCode}` };
    const data = (JSON.parse(text) as { data?: unknown }).data;
    if (!Array.isArray(data)) return { kind: "failed", detail: "GET /models: no data list" };
    const models: string[] = [];
    const prices = new Map<string, TokenPrices>();
    const windows = new Map<string, number>();
    for (const m of data.slice(0, 1_024) as unknown[]) {
      if (typeof m !== "object" || m === null || typeof (m as { id?: unknown }).id !== "string") continue;
      const id = (m as { id: string }).id;
      models.push(id);
      const price = routerPrice((m as { providers?: unknown }).providers);
      if (price !== undefined) prices.set(id, price);
      const window = listedWindow(m as Record<string, unknown>);
      if (window !== undefined) windows.set(id, window);
    }
    return { kind: "models", models, prices, windows };
  } catch (cause) {
    const code = (cause as { code?: string }).code;
    return { kind: "failed", detail: `${code === undefined ? "" : `${code} `}${(cause as Error).message}` };
  }
}

/** context: vLLM's `max_model_len`, else the smallest live `providers[].context_length` of the HF router. */
function listedWindow(m: Record<string, unknown>): number | undefined {
  const own = m["max_model_len"];
  if (typeof own === "number" && Number.isSafeInteger(own) && own > 0) return own;
  const providers = m["providers"];
  if (!Array.isArray(providers)) return undefined;
  let least: number | undefined;
  for (const p of providers as unknown[]) {
    const o = (typeof p === "object" && p !== null ? p : {}) as Record<string, unknown>;
    const n = o["context_length"];
    if (o["status"] === "error" || typeof n !== "number" || !Number.isSafeInteger(n) || n <= 0) continue;
    if (least === undefined || n < least) least = n;
  }
  return least;
}

/**
 * Inference Providers' per-million-token prices for one model (`providers[].pricing` of the router's
 * /v1/models): the live provider's, the highest if several (the router may pick any of them).
 */
function routerPrice(providers: unknown): TokenPrices | undefined {
  if (!Array.isArray(providers)) return undefined;
  let best: TokenPrices | undefined;
  for (const p of providers as unknown[]) {
    const o = (typeof p === "object" && p !== null ? p : {}) as Record<string, unknown>;
    const pricing = o["pricing"] as { input?: unknown; output?: unknown } | undefined;
    if (o["status"] === "error" || typeof pricing !== "object" || pricing === null) continue;
    const { input, output } = pricing;
    if (typeof input !== "number" || typeof output !== "number" || !(input >= 0) || !(output >= 0)) continue;
    if (best === undefined || output > best.output) best = { input, output };
  }
  return best;
}

/** Whether an endpoint's engine serves its model: a wake and the startup deadline ask this. */
export type ServeCheck =
  | { readonly serves: true }
  | {
      readonly serves: false;
      readonly why: string;
      /** 503: loading, or scaled to zero (a request wakes it). */
      readonly warming?: true;
      /** The status with which it refused the token (401/403). */
      readonly refused?: number;
    };

/**
 * Whether the engine at `baseUrl` (a data-plane URL, without `/v1`) lists one of `models` on
 * `/v1/models` (any model when none is known). A running endpoint whose image is not an OpenAI
 * server (HF's Inference Toolkit) answers 404 here and never serves PAIR's requests.
 */
export async function servesModel(
  dispatcher: Dispatcher,
  baseUrl: string,
  token: Redacted<string> | undefined,
  models: readonly string[],
  timeoutMs = 10_000,
): Promise<ServeCheck> {
  const answer = await listModels(dispatcher, `${baseUrl.replace(/\/$/, "")}/v1`, token, timeoutMs);
  switch (answer.kind) {
    case "models": {
      const listed =
        models.length === 0 ? answer.models.length > 0 : answer.models.some((m) => models.includes(m));
      if (listed) return { serves: true };
      const seen = answer.models.length === 0 ? "no model" : answer.models.slice(0, 3).join(", ");
      return { serves: false, why: `its /v1/models lists ${seen}, not ${models.join(" or ")}` };
    }
    case "warming":
      return { serves: false, why: "its /v1/models answers 503 (loading or scaled to zero)", warming: true };
    case "rejected":
      return {
        serves: false,
        why: `its /v1/models refused the token (${answer.status})`,
        refused: answer.status,
      };
    case "failed":
      return { serves: false, why: answer.detail.replace("GET /models", "GET /v1/models") };
  }
}
