/**
 * The one chat a test sends a node (or an engine) when the request's content does not matter: one
 * user message, a model, optionally streamed, capped, on the OpenAI or the Ollama route.
 * Must not know: which node or world answers, what a test asserts about the answer.
 */

import type { IncomingHttpHeaders } from "node:http";
import { request, type Dispatcher } from "undici";

export type ChatRoute = "/v1/chat/completions" | "/api/chat";

export interface ChatRequest {
  readonly model: string;
  /** Sent as `stream` when given; absent otherwise (the route's default). */
  readonly stream?: boolean | undefined;
  /** Sent as `max_tokens` when given. */
  readonly maxTokens?: number | undefined;
  /** The user message; "hi" by default. */
  readonly content?: string | undefined;
  readonly route?: ChatRoute | undefined;
  /** Added to `content-type: application/json`. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** The JSON body of a one-message chat. */
export function chatBody(req: ChatRequest): string {
  return JSON.stringify({
    model: req.model,
    ...(req.stream === undefined ? {} : { stream: req.stream }),
    ...(req.maxTokens === undefined ? {} : { max_tokens: req.maxTokens }),
    messages: [{ role: "user", content: req.content ?? "hi" }],
  });
}

const chatUrl = (url: string, req: ChatRequest): string => `${url}${req.route ?? "/v1/chat/completions"}`;

function chatInit(req: ChatRequest): {
  method: "POST";
  headers: Record<string, string>;
  body: string;
  signal?: AbortSignal;
} {
  return {
    method: "POST",
    headers: { "content-type": "application/json", ...req.headers },
    body: chatBody(req),
    ...(req.signal === undefined ? {} : { signal: req.signal }),
  };
}

/** Posts a chat to `url` (a base URL); the answer with its body unread, for a test that reads status, headers or a stream itself. */
export function postChat(url: string, req: ChatRequest): Promise<Dispatcher.ResponseData> {
  return request(chatUrl(url, req), chatInit(req));
}

/** The same chat through `fetch`, for a test written against a WHATWG `Response` (lazy body, `headers.get`). */
export function fetchChat(url: string, req: ChatRequest): Promise<Response> {
  return fetch(chatUrl(url, req), chatInit(req));
}

export interface ChatReply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The whole body (SSE or NDJSON when streamed). */
  readonly text: string;
  /** The body parsed as JSON; throws when it is not. */
  json<T = Record<string, unknown>>(): T;
}

/** Posts a chat and reads its answer whole. */
export async function chatReply(url: string, req: ChatRequest): Promise<ChatReply> {
  const res = await postChat(url, req);
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: <T>() => JSON.parse(text) as T };
}

export interface ChatError {
  readonly status: number;
  readonly code: string;
  readonly node?: string;
  readonly message: string;
}

/** A refused chat's status and the fields of its OpenAI error envelope (`{error: {...}}`). */
export async function chatError(res: Dispatcher.ResponseData): Promise<ChatError> {
  const body = (await res.body.json()) as { error: Omit<ChatError, "status"> };
  return { status: res.statusCode, ...body.error };
}
