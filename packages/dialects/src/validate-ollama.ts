/**
 * Readers for the four Ollama POST bodies: `/api/chat`, `/api/generate`, `/api/embed` and the
 * legacy `/api/embeddings`. Each checks the fields `docs/api.md` defines (types, required fields,
 * the known `options`, the limits of `ValidationLimits`) and returns a copy in which unknown fields
 * and unknown options pass through untouched and fields sent as `null` are dropped (Go reads
 * `null` as the zero value).
 *
 * Stricter than Ollama on purpose, as PAIR's interface asks: `messages` must not be empty and
 * `prompt` must be present, so the "load the model" forms of chat and generate are refused.
 *
 * Must not know: OpenAI, HTTP, translation.
 */

import type {
  OllamaChatRequest,
  OllamaEmbedRequest,
  OllamaEmbeddingsRequest,
  OllamaFormat,
  OllamaGenerateRequest,
  OllamaMessage,
  OllamaOptions,
  OllamaThink,
  OllamaToolCall,
} from "./ollama-wire.js";
import {
  ObjectFields,
  arrayOf,
  bool,
  expected,
  int,
  intAtLeast,
  isRecord,
  literal,
  nonEmpty,
  nonEmptyStr,
  num,
  numAtLeast,
  record,
  str,
  type Parse,
} from "./json-fields.js";
import { perLimits, type ValidationLimits } from "./validation-limits.js";

// Readers that take limits are built once per limits object (`perLimits`), not per request.

const nonNegative = numAtLeast(0);
const atLeastOne = intAtLeast(1);
const thinkLevel = literal(["high", "medium", "low"]);
const functionType = literal(["function"]);
const roles = literal(["system", "user", "assistant", "tool"]);

/** `"json"`, a schema object, or `""` (no format, returned as `undefined`). */
const format: Parse<OllamaFormat | undefined> = (value, path) => {
  if (value === "") return undefined;
  if (value === "json" || isRecord(value)) return value;
  return expected(path, `"json" or a JSON schema object`, value);
};

const think: Parse<OllamaThink> = (value, path) => {
  if (typeof value === "boolean") return value;
  return thinkLevel(value, path);
};

const keepAlive: Parse<string | number> = (value, path) =>
  typeof value === "string" || (typeof value === "number" && Number.isFinite(value))
    ? value
    : expected(path, `a duration string such as "5m" or a number of seconds`, value);

const options = perLimits((limits): Parse<OllamaOptions> => {
  const stop = arrayOf(str, {
    max: limits.maxStopSequences,
    limitName: "maxStopSequences",
    noun: "stop sequences",
  });
  return (value, path) => {
    const o = ObjectFields.of(value, path);
    o.opt("num_predict", int);
    o.opt("temperature", nonNegative);
    o.opt("top_p", nonNegative);
    o.opt("top_k", int);
    o.opt("min_p", nonNegative);
    o.opt("stop", stop);
    o.opt("seed", int);
    o.opt("frequency_penalty", num);
    o.opt("presence_penalty", num);
    o.opt("repeat_penalty", num);
    o.opt("num_ctx", atLeastOne);
    return o.done<OllamaOptions>();
  };
});

const images = perLimits((limits): Parse<readonly string[]> =>
  arrayOf(nonEmptyStr, {
    max: limits.maxImagesPerMessage,
    limitName: "maxImagesPerMessage",
    noun: "images",
  }),
);

const toolCall: Parse<OllamaToolCall> = (value, path) => {
  const call = ObjectFields.of(value, path);
  call.opt("id", str);
  const fn = ObjectFields.of(call.source["function"], `${path}.function`);
  fn.req("name", nonEmptyStr);
  fn.req("arguments", record);
  fn.opt("index", intAtLeast(0));
  call.set("function", fn.done());
  return call.done<OllamaToolCall>();
};

const message = perLimits((limits): Parse<OllamaMessage> => {
  const calls = arrayOf(toolCall, {
    max: limits.maxToolCallsPerMessage,
    limitName: "maxToolCallsPerMessage",
    noun: "tool calls",
  });
  const pictures = images(limits);
  return (value, path) => {
    const m = ObjectFields.of(value, path, "a message object");
    m.req("role", roles);
    // Ollama's Go decoder makes a missing content "": an assistant turn may carry only tool calls.
    if (m.opt("content", str) === undefined) m.set("content", "");
    m.opt("thinking", str);
    m.opt("images", pictures);
    m.opt("tool_calls", calls);
    m.opt("tool_name", str);
    return m.done<OllamaMessage>();
  };
});

const tool: Parse<unknown> = (value, path) => {
  const t = ObjectFields.of(value, path, "a tool object");
  t.req("type", functionType);
  const fn = ObjectFields.of(t.source["function"], `${path}.function`);
  fn.req("name", nonEmptyStr);
  fn.opt("description", str);
  fn.opt("parameters", record);
  t.set("function", fn.done());
  return t.done();
};

/** The fields chat and generate share. */
function readCommon(body: ObjectFields, limits: ValidationLimits): void {
  body.opt("format", format);
  body.opt("options", options(limits));
  body.opt("stream", bool);
  body.opt("keep_alive", keepAlive);
  body.opt("think", think);
}

const messages = perLimits((limits) =>
  nonEmpty(
    arrayOf(message(limits), { max: limits.maxMessages, limitName: "maxMessages", noun: "messages" }),
    "message",
  ),
);

const tools = perLimits((limits) =>
  arrayOf(tool, { max: limits.maxTools, limitName: "maxTools", noun: "tools" }),
);

const contextIds = perLimits((limits) =>
  arrayOf(int, { max: limits.maxTokenIds, limitName: "maxTokenIds", noun: "context token ids" }),
);

const embedInputs = perLimits((limits) =>
  nonEmpty(
    arrayOf(str, { max: limits.maxEmbeddingInputs, limitName: "maxEmbeddingInputs", noun: "inputs" }),
    "input",
  ),
);

export function readOllamaChatRequest(value: unknown, limits: ValidationLimits): OllamaChatRequest {
  const body = ObjectFields.of(value, "", "a JSON object");
  body.req("model", nonEmptyStr);
  body.req("messages", messages(limits));
  body.opt("tools", tools(limits));
  readCommon(body, limits);
  return body.done<OllamaChatRequest>();
}

export function readOllamaGenerateRequest(value: unknown, limits: ValidationLimits): OllamaGenerateRequest {
  const body = ObjectFields.of(value, "", "a JSON object");
  body.req("model", nonEmptyStr);
  // Present and a string; "" is allowed (Ollama reads it as "load the model", an engine as an empty prompt).
  body.req("prompt", str);
  body.opt("suffix", str);
  body.opt("system", str);
  body.opt("template", str);
  body.opt("context", contextIds(limits));
  body.opt("images", images(limits));
  body.opt("raw", bool);
  readCommon(body, limits);
  return body.done<OllamaGenerateRequest>();
}

export function readOllamaEmbedRequest(value: unknown, limits: ValidationLimits): OllamaEmbedRequest {
  const body = ObjectFields.of(value, "", "a JSON object");
  body.req("model", nonEmptyStr);
  const inputs = embedInputs(limits);
  body.req("input", (input, path) =>
    typeof input === "string"
      ? input
      : Array.isArray(input)
        ? inputs(input, path)
        : expected(path, "a string or an array of strings", input),
  );
  body.opt("truncate", bool);
  body.opt("dimensions", atLeastOne);
  body.opt("options", options(limits));
  body.opt("keep_alive", keepAlive);
  return body.done<OllamaEmbedRequest>();
}

export function readOllamaEmbeddingsRequest(
  value: unknown,
  limits: ValidationLimits,
): OllamaEmbeddingsRequest {
  const body = ObjectFields.of(value, "", "a JSON object");
  body.req("model", nonEmptyStr);
  body.req("prompt", str);
  body.opt("options", options(limits));
  body.opt("keep_alive", keepAlive);
  return body.done<OllamaEmbeddingsRequest>();
}
