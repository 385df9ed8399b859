/**
 * Context windows as each emulated engine keeps them: the routes that state them (llama.cpp
 * `GET /props`, TGI `GET /info`), the tokenizer routes (`POST /tokenize` in each flavor's shape),
 * each flavor's refusal of a prompt too long for its window (vLLM 400, llama.cpp 400
 * `exceed_context_size_error`, TGI 422), and Ollama's silent truncation: a prompt over the
 * `num_ctx` the model runs with keeps its first `num_keep` (4) tokens and its newest tail, answers
 * 200 and reports `prompt_eval_count` = num_ctx — the reply then echoes the cut text, so a test sees
 * it answered about the wrong prompt. Token counts are the emulator's own (token-generator.ts).
 * Departs from the engines: the messages are one version's wording each (engines-api notes).
 */

import type { EngineContext, Route } from "./engine-context.js";
import { findModel } from "./engine-context.js";
import { isRecord } from "./field-reader.js";
import { readJsonObject, sendJson, type Exchange } from "./http-exchange.js";
import type { ResolvedModel } from "./options.js";
import { countChatTokens, countTextTokens, tokenIds, type CountedMessage } from "./token-generator.js";

/** Ollama's `num_keep` default: tokens kept from the prompt's start when it is cut. */
const NUM_KEEP = 4;

/** A refusal of a prompt too long, as the flavor answers it; undefined when it fits. */
export function openAiOverflow(
  ctx: EngineContext,
  model: ResolvedModel,
  promptTokens: number,
  maxTokens: number | undefined,
): { status: number; body: unknown } | undefined {
  // Ollama's own /v1 routes ("both") cut a long prompt as its /api routes do: no refusal here.
  if (ctx.options.api === "both") return undefined;
  const window = model.contextTokens;
  const out = maxTokens ?? 0;
  switch (ctx.options.flavor) {
    case "vllm":
      if (promptTokens + out <= window && promptTokens < window) return undefined;
      return {
        status: 400,
        body: {
          error: {
            message:
              `This model's maximum context length is ${window} tokens. However, you requested ` +
              `${promptTokens + out} tokens (${promptTokens} in the messages, ${out} in the completion). ` +
              "Please reduce the length of the messages or completion.",
            type: "BadRequestError",
            param: null,
            code: 400,
          },
        },
      };
    case "llamacpp":
      // llama.cpp checks the prompt only; generation stops at the window.
      if (promptTokens < window) return undefined;
      return {
        status: 400,
        body: {
          error: {
            code: 400,
            message: `request (${promptTokens} tokens) exceeds the available context size (${window} tokens), try increasing it`,
            type: "exceed_context_size_error",
            n_prompt_tokens: promptTokens,
            n_ctx: window,
          },
        },
      };
    case "tgi": {
      const maxInput = window - 1;
      if (promptTokens > maxInput)
        return {
          status: 422,
          body: {
            error: `Input validation error: \`inputs\` must have less than ${maxInput} tokens. Given: ${promptTokens}`,
            error_type: "validation",
          },
        };
      if (promptTokens + out <= window) return undefined;
      return {
        status: 422,
        body: {
          error:
            `Input validation error: \`inputs\` tokens + \`max_new_tokens\` must be <= ${window}. ` +
            `Given: ${promptTokens} \`inputs\` tokens and ${out} \`max_new_tokens\``,
          error_type: "validation",
        },
      };
    }
  }
}

/** The `num_ctx` an Ollama request runs with: its own (the model reloads with it), else the model's. */
export function ollamaNumCtx(ctx: EngineContext, model: ResolvedModel, asked: number | undefined): number {
  if (asked !== undefined)
    ctx.numCtx.set(model.name, Math.min(Math.max(asked, NUM_KEEP), model.contextTokens));
  else ctx.numCtx.delete(model.name);
  return ctx.numCtx.get(model.name) ?? model.numCtx;
}

/** What Ollama does to a prompt over num_ctx: cut, without an error. `echo` loses its cut words. */
export function ollamaTruncate(
  promptTokens: number,
  numCtx: number,
  echo: string,
): { promptTokens: number; echo: string; truncated: boolean } {
  if (promptTokens <= numCtx) return { promptTokens, echo, truncated: false };
  const cut = promptTokens - numCtx;
  const words = echo.match(/\S+/g) ?? [];
  // The first NUM_KEEP tokens are the template's and the oldest messages'; the cut comes after.
  return { promptTokens: numCtx, echo: words.slice(cut).join(" "), truncated: true };
}

function props(ctx: EngineContext, exchange: Exchange): Promise<void> {
  const model = ctx.options.models[0]!;
  sendJson(exchange.res, 200, {
    default_generation_settings: { n_ctx: model.contextTokens, params: {} },
    total_slots: ctx.options.maxConcurrent,
    model_path: `/models/${model.name}.gguf`,
    build_info: "emulated",
  });
  return Promise.resolve();
}

function info(ctx: EngineContext, exchange: Exchange): Promise<void> {
  const model = ctx.options.models[0]!;
  sendJson(exchange.res, 200, {
    model_id: model.name,
    model_sha: null,
    model_pipeline_tag: "text-generation",
    max_concurrent_requests: ctx.options.maxConcurrent,
    max_best_of: 2,
    max_stop_sequences: 4,
    max_input_tokens: model.contextTokens - 1,
    max_total_tokens: model.contextTokens,
    validation_workers: 2,
    max_client_batch_size: 4,
    router: "text-generation-router",
    version: "3.3.7",
  });
  return Promise.resolve();
}

function messagesOf(value: unknown): CountedMessage[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.map((m: unknown) => {
    const o = isRecord(m) ? m : {};
    return {
      role: typeof o["role"] === "string" ? o["role"] : "user",
      content: typeof o["content"] === "string" ? o["content"] : "",
    };
  });
}

async function tokenize(ctx: EngineContext, exchange: Exchange): Promise<void> {
  const parsed = await readJsonObject(exchange, ctx.options.maxBodyBytes);
  if (!parsed.ok) return sendJson(exchange.res, 400, { error: "invalid JSON" });
  const body = parsed.value;
  switch (ctx.options.flavor) {
    case "vllm": {
      const name = typeof body["model"] === "string" ? body["model"] : ctx.options.models[0]!.name;
      const model = findModel(ctx, name, "openai");
      if (model === undefined)
        return sendJson(exchange.res, 404, { error: { message: `model ${name} not found` } });
      const messages = messagesOf(body["messages"]);
      const prompt = typeof body["prompt"] === "string" ? body["prompt"] : "";
      const count = messages === undefined ? countTextTokens(prompt) : countChatTokens(messages);
      return sendJson(exchange.res, 200, {
        count,
        max_model_len: model.contextTokens,
        tokens: Array.from({ length: count }, (_, i) => i),
        token_strs: null,
      });
    }
    case "llamacpp": {
      const content = typeof body["content"] === "string" ? body["content"] : "";
      return sendJson(exchange.res, 200, { tokens: tokenIds(content) });
    }
    case "tgi": {
      const inputs = typeof body["inputs"] === "string" ? body["inputs"] : "";
      const words = inputs.match(/\S+/g) ?? [];
      return sendJson(
        exchange.res,
        200,
        words.map((text, id) => ({ id, text, start: 0, stop: text.length })),
      );
    }
  }
}

/** `GET /props` on llama.cpp, `GET /info` on TGI, `POST /tokenize` on each; 404 where the flavor has none. */
function flavored(flavor: "llamacpp" | "tgi", handler: Route["handler"]): Route["handler"] {
  return (ctx, exchange) => {
    if (ctx.options.flavor === flavor) return handler(ctx, exchange);
    sendJson(exchange.res, 404, { detail: "Not Found" });
    return Promise.resolve();
  };
}

export const contextRoutes: readonly Route[] = [
  { method: "GET", path: "/props", handler: flavored("llamacpp", props) },
  { method: "GET", path: "/info", handler: flavored("tgi", info) },
  { method: "POST", path: "/tokenize", handler: tokenize },
];
