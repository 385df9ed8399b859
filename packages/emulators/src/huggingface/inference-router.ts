/**
 * The Inference Providers router (`https://router.huggingface.co/v1` in real life; here `/router/v1`
 * on the emulator's server): an OpenAI-compatible API behind any valid Hugging Face token, served by
 * an engine handler, with HF's model listing (providers, per-million-token prices) and a per-token
 * charge on the meter for every answered generation.
 * Must not know: endpoints, the control plane.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { EngineHandler } from "../engine/handler.js";

/** A model the router serves, with its provider's prices (USD per million tokens). */
export interface RouterModel {
  readonly id: string;
  readonly provider: string;
  readonly inputPerMillion: number;
  readonly outputPerMillion: number;
  readonly contextLength?: number;
}

export const DEFAULT_ROUTER_MODELS: readonly RouterModel[] = [
  {
    id: "meta-llama/Llama-3.1-8B-Instruct",
    provider: "cerebras",
    inputPerMillion: 0.1,
    outputPerMillion: 0.1,
    contextLength: 131072,
  },
  {
    id: "openai/gpt-oss-120b",
    provider: "groq",
    inputPerMillion: 0.15,
    outputPerMillion: 0.6,
    contextLength: 131072,
  },
];

function sendJsonBody(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader("content-type", "application/json");
  res.setHeader("content-length", Buffer.byteLength(text));
  res.end(text);
}

export function renderRouterModels(models: readonly RouterModel[]): unknown {
  return {
    object: "list",
    data: models.map((model) => ({
      id: model.id,
      object: "model",
      created: 1_700_000_000,
      owned_by: model.id.split("/")[0] ?? "unknown",
      architecture: { input_modalities: ["text"], output_modalities: ["text"] },
      providers: [
        {
          provider: model.provider,
          status: "live",
          ...(model.contextLength === undefined ? {} : { context_length: model.contextLength }),
          pricing: { input: model.inputPerMillion, output: model.outputPerMillion },
          supports_tools: false,
          supports_structured_output: false,
          is_model_author: false,
        },
      ],
    })),
  };
}

/** Serves a request whose path starts with `/router/`; `authorized` says whether the token is valid. */
export function handleRouter(
  engine: EngineHandler,
  models: readonly RouterModel[],
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  authorized: boolean,
): void {
  if (!authorized) return sendJsonBody(res, 401, { error: "Invalid credentials in Authorization header" });
  if (path === "/router/v1/models" && req.method === "GET")
    return sendJsonBody(res, 200, renderRouterModels(models));
  if (path === "/router/v1/chat/completions" && req.method === "POST") {
    req.url = "/v1/chat/completions";
    return engine.handle(req, res);
  }
  sendJsonBody(res, 404, {
    error: `Not Found: ${req.method ?? "GET"} ${path} (the router serves /v1/models and /v1/chat/completions)`,
  });
}
