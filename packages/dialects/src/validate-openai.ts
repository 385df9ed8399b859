/**
 * Readers for the three OpenAI POST bodies: `/v1/chat/completions`, `/v1/completions`,
 * `/v1/embeddings`. Each checks the fields OpenAI defines (types, required fields, enums, the
 * limits of `ValidationLimits`) and returns a copy in which unknown fields pass through untouched
 * and known optional fields sent as `null` are dropped.
 *
 * Must not know: Ollama, HTTP, translation.
 */

import type {
  OpenAIChatRequest,
  OpenAICompletionRequest,
  OpenAIEmbeddingRequest,
  OpenAIMessage,
  OpenAIToolCall,
} from "./openai-wire.js";
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

const detail = literal(["auto", "low", "high"]);
const functionType = literal(["function"]);
const nonNegative = numAtLeast(0);
const atLeastOne = intAtLeast(1);
const notNegative = intAtLeast(0);

function contentPart(types: readonly string[]): Parse<unknown> {
  const typeOf = literal(types);
  return (value, path) => {
    const part = ObjectFields.of(value, path, "a content part object");
    const type = part.req("type", typeOf);
    switch (type) {
      case "text":
        part.req("text", str);
        break;
      case "image_url": {
        const image = ObjectFields.of(part.source["image_url"], `${path}.image_url`);
        image.req("url", nonEmptyStr);
        image.opt("detail", detail);
        part.set("image_url", image.done());
        break;
      }
      case "input_audio": {
        const audio = ObjectFields.of(part.source["input_audio"], `${path}.input_audio`);
        audio.req("data", str);
        audio.req("format", str);
        part.set("input_audio", audio.done());
        break;
      }
      case "file":
        part.req("file", record);
        break;
      case "refusal":
        part.req("refusal", str);
        break;
      default:
        break;
    }
    return part.done();
  };
}

/** `content`: a string or an array of the given part types. */
function content(types: readonly string[], limits: ValidationLimits): Parse<unknown> {
  const parts = arrayOf(contentPart(types), {
    max: limits.maxContentPartsPerMessage,
    limitName: "maxContentPartsPerMessage",
    noun: "content parts",
  });
  return (value, path) => {
    if (typeof value === "string") return value;
    if (Array.isArray(value)) return parts(value, path);
    return expected(path, "a string or an array of content parts", value);
  };
}

const toolCall: Parse<OpenAIToolCall> = (value, path) => {
  const call = ObjectFields.of(value, path);
  call.req("id", str);
  call.req("type", functionType);
  const fn = ObjectFields.of(call.source["function"], `${path}.function`);
  fn.req("name", nonEmptyStr);
  fn.req("arguments", str);
  call.set("function", fn.done());
  return call.done<OpenAIToolCall>();
};

const ROLES = ["system", "developer", "user", "assistant", "tool"] as const;

const message = perLimits((limits): Parse<OpenAIMessage> => {
  const roles = literal(ROLES);
  const textOnly = content(["text"], limits);
  const userContent = content(["text", "image_url", "input_audio", "file"], limits);
  const assistantContent = content(["text", "refusal"], limits);
  const toolCalls = arrayOf(toolCall, {
    max: limits.maxToolCallsPerMessage,
    limitName: "maxToolCallsPerMessage",
    noun: "tool calls",
  });
  return (value, path) => {
    const m = ObjectFields.of(value, path, "a message object");
    const role = m.req("role", roles);
    m.opt("name", str);
    switch (role) {
      case "system":
      case "developer":
        m.req("content", textOnly);
        break;
      case "user":
        m.req("content", userContent);
        break;
      case "assistant":
        m.opt("content", assistantContent);
        m.opt("refusal", str);
        m.opt("tool_calls", toolCalls);
        m.opt("reasoning_content", str);
        break;
      case "tool":
        m.req("content", textOnly);
        m.req("tool_call_id", str);
        break;
    }
    return m.done<OpenAIMessage>();
  };
});

const stopSequences = perLimits((limits): Parse<string | readonly string[]> => {
  const list = arrayOf(str, {
    max: limits.maxStopSequences,
    limitName: "maxStopSequences",
    noun: "stop sequences",
  });
  return (value, path) => {
    if (typeof value === "string") return value;
    if (Array.isArray(value)) return list(value, path);
    return expected(path, "a string or an array of strings", value);
  };
});

const streamOptions: Parse<unknown> = (value, path) => {
  const options = ObjectFields.of(value, path);
  options.opt("include_usage", bool);
  return options.done();
};

/** The sampling fields chat and text completions share. */
function readSampling(body: ObjectFields, limits: ValidationLimits): void {
  body.opt("temperature", nonNegative);
  body.opt("top_p", nonNegative);
  body.opt("n", atLeastOne);
  body.opt("stop", stopSequences(limits));
  body.opt("seed", int);
  body.opt("frequency_penalty", num);
  body.opt("presence_penalty", num);
  body.opt("stream", bool);
  body.opt("stream_options", streamOptions);
  body.opt("user", str);
  body.opt("top_k", int);
  body.opt("min_p", nonNegative);
}

const functionTool: Parse<unknown> = (value, path) => {
  const tool = ObjectFields.of(value, path, "a tool object");
  tool.req("type", functionType);
  const fn = ObjectFields.of(tool.source["function"], `${path}.function`);
  fn.req("name", nonEmptyStr);
  fn.opt("description", str);
  fn.opt("parameters", record);
  fn.opt("strict", bool);
  tool.set("function", fn.done());
  return tool.done();
};

const choiceMode = literal(["none", "auto", "required"]);

const toolChoice: Parse<unknown> = (value, path) => {
  if (typeof value === "string") return choiceMode(value, path);
  if (!isRecord(value)) return expected(path, `"none", "auto", "required" or a function choice`, value);
  const choice = new ObjectFields(value, path);
  choice.req("type", functionType);
  const fn = ObjectFields.of(value["function"], `${path}.function`);
  fn.req("name", nonEmptyStr);
  choice.set("function", fn.done());
  return choice.done();
};

const formatType = literal(["text", "json_object", "json_schema"]);

const responseFormat: Parse<unknown> = (value, path) => {
  const format = ObjectFields.of(value, path);
  const type = format.req("type", formatType);
  if (type === "json_schema") {
    const schema = ObjectFields.of(format.source["json_schema"], `${path}.json_schema`);
    schema.req("name", nonEmptyStr);
    schema.opt("description", str);
    schema.opt("schema", record);
    schema.opt("strict", bool);
    format.set("json_schema", schema.done());
  }
  return format.done();
};

const messages = perLimits((limits) =>
  nonEmpty(
    arrayOf(message(limits), { max: limits.maxMessages, limitName: "maxMessages", noun: "messages" }),
    "message",
  ),
);

const tools = perLimits((limits) =>
  arrayOf(functionTool, { max: limits.maxTools, limitName: "maxTools", noun: "tools" }),
);

export function readOpenAIChatRequest(value: unknown, limits: ValidationLimits): OpenAIChatRequest {
  const body = ObjectFields.of(value, "", "a JSON object");
  body.req("model", nonEmptyStr);
  body.req("messages", messages(limits));
  readSampling(body, limits);
  body.opt("max_tokens", atLeastOne);
  body.opt("max_completion_tokens", atLeastOne);
  body.opt("response_format", responseFormat);
  body.opt("tools", tools(limits));
  body.opt("tool_choice", toolChoice);
  body.opt("parallel_tool_calls", bool);
  body.opt("logprobs", bool);
  body.opt("top_logprobs", notNegative);
  body.opt("reasoning_effort", str);
  return body.done<OpenAIChatRequest>();
}

/** A string, an array of strings, an array of token ids, or an array of token-id arrays. */
function textOrTokens(
  limits: ValidationLimits,
  countLimit: number,
  countName: string,
  noun: string,
): Parse<unknown> {
  const tokens = arrayOf(notNegative, {
    max: limits.maxTokenIds,
    limitName: "maxTokenIds",
    noun: "token ids",
  });
  const bound = { max: countLimit, limitName: countName, noun };
  const strings = arrayOf(str, bound);
  const tokenLists = arrayOf(tokens, bound);
  const what = "a string, an array of strings, or an array of token ids";
  return (value, path) => {
    if (typeof value === "string") return value;
    if (!Array.isArray(value)) return expected(path, what, value);
    if (value.length === 0) return expected(path, `${what} (not empty)`, value);
    const first: unknown = value[0];
    if (typeof first === "string") return strings(value, path);
    if (typeof first === "number") return tokens(value, path);
    if (Array.isArray(first)) return tokenLists(value, path);
    return expected(`${path}[0]`, "a string, a token id or an array of token ids", first);
  };
}

const prompts = perLimits((limits) => textOrTokens(limits, limits.maxPrompts, "maxPrompts", "prompts"));

const embeddingInputs = perLimits((limits) =>
  textOrTokens(limits, limits.maxEmbeddingInputs, "maxEmbeddingInputs", "inputs"),
);

const encodingFormat = literal(["float", "base64"]);

export function readOpenAICompletionRequest(
  value: unknown,
  limits: ValidationLimits,
): OpenAICompletionRequest {
  const body = ObjectFields.of(value, "", "a JSON object");
  body.req("model", nonEmptyStr);
  body.req("prompt", prompts(limits));
  readSampling(body, limits);
  body.opt("suffix", str);
  body.opt("max_tokens", atLeastOne);
  body.opt("echo", bool);
  body.opt("best_of", atLeastOne);
  body.opt("logprobs", notNegative);
  return body.done<OpenAICompletionRequest>();
}

export function readOpenAIEmbeddingRequest(value: unknown, limits: ValidationLimits): OpenAIEmbeddingRequest {
  const body = ObjectFields.of(value, "", "a JSON object");
  body.req("model", nonEmptyStr);
  body.req("input", embeddingInputs(limits));
  body.opt("dimensions", atLeastOne);
  body.opt("encoding_format", encodingFormat);
  body.opt("user", str);
  return body.done<OpenAIEmbeddingRequest>();
}
