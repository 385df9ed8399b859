/**
 * Recorded-style engine streams, written by hand from the documented wire formats: vLLM's SSE
 * (runpod-api.md §8.6: role chunk, token chunks, finish chunk, usage chunk with `choices: []`,
 * `[DONE]`; tool calls as `delta.tool_calls` fragments; a mid-stream error followed by `[DONE]`) and
 * Ollama's NDJSON (ollama docs/api.md: `done: false` objects, then the final object with metrics).
 * Also two tiny real images (their MIME type is sniffed from the bytes) and a result unwrapper.
 */

export const encoder = new TextEncoder();

/** A 1×1 PNG, base64: the MIME type is sniffed from its bytes. */
export const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
export const JPEG =
  "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/";

export function ok<T>(result: { ok: true; value: T } | { ok: false; error: unknown }): T {
  if (!result.ok) throw new Error(`expected ok, got ${JSON.stringify(result.error)}`);
  return result.value;
}

function sse(chunks: readonly unknown[], done = true): string {
  return chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + (done ? "data: [DONE]\n\n" : "");
}

const head = {
  id: "chatcmpl-7f3a",
  object: "chat.completion.chunk",
  created: 1_733_000_000,
  model: "llama-3.1-8b",
};

/** vLLM chat stream, `stream_options.include_usage: true`: "The sky is blue." */
export const VLLM_CHAT_SSE = sse([
  {
    ...head,
    choices: [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }],
  },
  { ...head, choices: [{ index: 0, delta: { content: "The" }, logprobs: null, finish_reason: null }] },
  { ...head, choices: [{ index: 0, delta: { content: " sky is" }, logprobs: null, finish_reason: null }] },
  { ...head, choices: [{ index: 0, delta: { content: " blue." }, logprobs: null, finish_reason: null }] },
  {
    ...head,
    choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: "stop", stop_reason: null }],
  },
  { ...head, choices: [], usage: { prompt_tokens: 26, total_tokens: 31, completion_tokens: 5 } },
]);

/** vLLM chat stream ending in two tool calls, streamed as fragments. */
export const VLLM_TOOL_CALL_SSE = sse([
  { ...head, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] },
  {
    ...head,
    choices: [
      {
        index: 0,
        delta: {
          tool_calls: [
            {
              index: 0,
              id: "chatcmpl-tool-1",
              type: "function",
              function: { name: "get_weather", arguments: "" },
            },
          ],
        },
        finish_reason: null,
      },
    ],
  },
  {
    ...head,
    choices: [
      {
        index: 0,
        delta: { tool_calls: [{ index: 0, function: { arguments: '{"city": ' } }] },
        finish_reason: null,
      },
    ],
  },
  {
    ...head,
    choices: [
      {
        index: 0,
        delta: { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
        finish_reason: null,
      },
    ],
  },
  {
    ...head,
    choices: [
      {
        index: 0,
        delta: {
          tool_calls: [
            {
              index: 1,
              id: "chatcmpl-tool-2",
              type: "function",
              function: { name: "get_time", arguments: "{}" },
            },
          ],
        },
        finish_reason: null,
      },
    ],
  },
  { ...head, choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
  { ...head, choices: [], usage: { prompt_tokens: 120, total_tokens: 150, completion_tokens: 30 } },
]);

/** A reasoning model on vLLM: `reasoning_content` deltas before the answer. */
export const VLLM_REASONING_SSE = sse([
  { ...head, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] },
  { ...head, choices: [{ index: 0, delta: { reasoning_content: "Rayleigh." }, finish_reason: null }] },
  { ...head, choices: [{ index: 0, delta: { content: "Blue." }, finish_reason: null }] },
  { ...head, choices: [{ index: 0, delta: {}, finish_reason: "length" }] },
  { ...head, choices: [], usage: { prompt_tokens: 10, total_tokens: 13, completion_tokens: 3 } },
]);

/** vLLM fails after the stream started: an error event, then still `[DONE]`. */
export const VLLM_MID_STREAM_ERROR_SSE = sse([
  { ...head, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] },
  { ...head, choices: [{ index: 0, delta: { content: "Once" }, finish_reason: null }] },
  { error: { message: "CUDA out of memory", type: "InternalServerError", param: null, code: 500 } },
]);

const textHead = {
  id: "cmpl-91b2",
  object: "text_completion",
  created: 1_733_000_000,
  model: "llama-3.1-8b",
};

/** vLLM text-completion stream (nulls serialised), with usage. */
export const VLLM_COMPLETION_SSE = sse([
  {
    ...textHead,
    choices: [{ index: 0, text: " a", logprobs: null, finish_reason: null, stop_reason: null }],
  },
  {
    ...textHead,
    choices: [{ index: 0, text: " b", logprobs: null, finish_reason: null, stop_reason: null }],
  },
  {
    ...textHead,
    choices: [{ index: 0, text: "", logprobs: null, finish_reason: "length", stop_reason: null }],
  },
  { ...textHead, choices: [], usage: { prompt_tokens: 4, total_tokens: 6, completion_tokens: 2 } },
]);

function ndjson(objects: readonly unknown[]): string {
  return objects.map((o) => `${JSON.stringify(o)}\n`).join("");
}

/** Ollama `/api/chat` stream (docs/api.md). */
export const OLLAMA_CHAT_NDJSON = ndjson([
  {
    model: "llama3.2",
    created_at: "2023-08-04T08:52:19.385406455-07:00",
    message: { role: "assistant", content: "The" },
    done: false,
  },
  {
    model: "llama3.2",
    created_at: "2023-08-04T08:52:19.485406455-07:00",
    message: { role: "assistant", content: " sky" },
    done: false,
  },
  {
    model: "llama3.2",
    created_at: "2023-08-04T08:52:19.585406455-07:00",
    message: { role: "assistant", content: " is blue." },
    done: false,
  },
  {
    model: "llama3.2",
    created_at: "2023-08-04T19:22:45.499127Z",
    message: { role: "assistant", content: "" },
    done_reason: "stop",
    done: true,
    total_duration: 4883583458,
    load_duration: 1334875,
    prompt_eval_count: 26,
    prompt_eval_duration: 342546000,
    eval_count: 282,
    eval_duration: 4535599000,
  },
]);

/** Ollama `/api/chat` streaming a tool call (whole, arguments as an object) and a thinking model. */
export const OLLAMA_TOOL_CALL_NDJSON = ndjson([
  {
    model: "qwen3",
    created_at: "2025-05-29T09:35:33.1Z",
    message: { role: "assistant", content: "", thinking: "Need weather." },
    done: false,
  },
  {
    model: "qwen3",
    created_at: "2025-05-29T09:35:33.2Z",
    message: {
      role: "assistant",
      content: "",
      tool_calls: [{ function: { name: "get_weather", arguments: { city: "Paris", unit: "celsius" } } }],
    },
    done: false,
  },
  {
    model: "qwen3",
    created_at: "2025-05-29T09:35:33.3Z",
    message: { role: "assistant", content: "" },
    done_reason: "stop",
    done: true,
    total_duration: 885095291,
    prompt_eval_count: 122,
    eval_count: 33,
  },
]);

/** Ollama `/api/generate` stream, truncated by `num_predict` (`done_reason: "length"`). */
export const OLLAMA_GENERATE_NDJSON = ndjson([
  { model: "llama3.2", created_at: "2023-08-04T08:52:19.3Z", response: "Why", done: false },
  { model: "llama3.2", created_at: "2023-08-04T08:52:19.4Z", response: " not", done: false },
  {
    model: "llama3.2",
    created_at: "2023-08-04T19:22:45.4Z",
    response: "",
    done: true,
    done_reason: "length",
    context: [1, 2, 3],
    total_duration: 10706818083,
    prompt_eval_count: 26,
    eval_count: 2,
  },
]);

/** Ollama cut off mid-stream: an error line (what Ollama writes when the runner dies). */
export const OLLAMA_MID_STREAM_ERROR_NDJSON = ndjson([
  {
    model: "llama3.2",
    created_at: "2023-08-04T08:52:19.3Z",
    message: { role: "assistant", content: "Once" },
    done: false,
  },
  { error: "llama runner process has terminated: exit status 2" },
]);
