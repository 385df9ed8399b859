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
import type { ValidationLimits } from "./validation-limits.js";

const detail = literal(["auto", "low", "high"]);

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
  call.req("type", literal(["function"]));
  const fn = ObjectFields.of(call.source["function"], `${path}.function`);
  fn.req("name", nonEmptyStr);
  fn.req("arguments", str);
  call.set("function", fn.done());
  return call.done<OpenAIToolCall>();
};

const ROLES = ["system", "developer", "user", "assistant", "tool"] as const;

function message(limits: ValidationLimits): Parse<OpenAIMessage> {
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
    const role = m.req("role", literal(ROLES));
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
}

function stopSequences(limits: ValidationLimits): Parse<string | readonly string[]> {
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
}

/** The sampling fields chat and text completions share. */
function readSampling(body: ObjectFields, limits: ValidationLimits): void {
  body.opt("temperature", numAtLeast(0));
  body.opt("top_p", numAtLeast(0));
  body.opt("n", intAtLeast(1));
  body.opt("stop", stopSequences(limits));
  body.opt("seed", int);
  body.opt("frequency_penalty", num);
  body.opt("presence_penalty", num);
  body.opt("stream", bool);
  body.opt("stream_options", (value, path) => {
    const options = ObjectFields.of(value, path);
    options.opt("include_usage", bool);
    return options.done();
  });
  body.opt("user", str);
  body.opt("top_k", int);
  body.opt("min_p", numAtLeast(0));
}

const functionTool: Parse<unknown> = (value, path) => {
  const tool = ObjectFields.of(value, path, "a tool object");
  tool.req("type", literal(["function"]));
  const fn = ObjectFields.of(tool.source["function"], `${path}.function`);
  fn.req("name", nonEmptyStr);
  fn.opt("description", str);
  fn.opt("parameters", record);
  fn.opt("strict", bool);
  tool.set("function", fn.done());
  return tool.done();
};

const toolChoice: Parse<unknown> = (value, path) => {
  if (typeof value === "string") return literal(["none", "auto", "required"])(value, path);
  if (!isRecord(value)) return expected(path, `"none", "auto", "required" or a function choice`, value);
  const choice = new ObjectFields(value, path);
  choice.req("type", literal(["function"]));
  const fn = ObjectFields.of(value["function"], `${path}.function`);
  fn.req("name", nonEmptyStr);
  choice.set("function", fn.done());
  return choice.done();
};

const responseFormat: Parse<unknown> = (value, path) => {
  const format = ObjectFields.of(value, path);
  const type = format.req("type", literal(["text", "json_object", "json_schema"]));
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

export function readOpenAIChatRequest(value: unknown, limits: ValidationLimits): OpenAIChatRequest {
  const body = ObjectFields.of(value, "", "a JSON object");
  body.req("model", nonEmptyStr);
  body.req(
    "messages",
    nonEmpty(
      arrayOf(message(limits), { max: limits.maxMessages, limitName: "maxMessages", noun: "messages" }),
      "message",
    ),
  );
  readSampling(body, limits);
  body.opt("max_tokens", intAtLeast(1));
  body.opt("max_completion_tokens", intAtLeast(1));
  body.opt("response_format", responseFormat);
  body.opt("tools", arrayOf(functionTool, { max: limits.maxTools, limitName: "maxTools", noun: "tools" }));
  body.opt("tool_choice", toolChoice);
  body.opt("parallel_tool_calls", bool);
  body.opt("logprobs", bool);
  body.opt("top_logprobs", intAtLeast(0));
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
  const tokens = arrayOf(intAtLeast(0), {
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

export function readOpenAICompletionRequest(
  value: unknown,
  limits: ValidationLimits,
): OpenAICompletionRequest {
  const body = ObjectFields.of(value, "", "a JSON object");
  body.req("model", nonEmptyStr);
  body.req("prompt", textOrTokens(limits, limits.maxPrompts, "maxPrompts", "prompts"));
  readSampling(body, limits);
  body.opt("suffix", str);
  body.opt("max_tokens", intAtLeast(1));
  body.opt("echo", bool);
  body.opt("best_of", intAtLeast(1));
  body.opt("logprobs", intAtLeast(0));
  return body.done<OpenAICompletionRequest>();
}

export function readOpenAIEmbeddingRequest(value: unknown, limits: ValidationLimits): OpenAIEmbeddingRequest {
  const body = ObjectFields.of(value, "", "a JSON object");
  body.req("model", nonEmptyStr);
  body.req("input", textOrTokens(limits, limits.maxEmbeddingInputs, "maxEmbeddingInputs", "inputs"));
  body.opt("dimensions", intAtLeast(1));
  body.opt("encoding_format", literal(["float", "base64"]));
  body.opt("user", str);
  return body.done<OpenAIEmbeddingRequest>();
}
