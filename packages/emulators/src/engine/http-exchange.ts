/**
 * One HTTP request/response pair as the emulator handles it: a signal that fires when the client
 * leaves (or the emulator closes), body reading with a size limit, JSON parsing, and writes that
 * honour backpressure. Knows node:http, nothing of the dialects or of models.
 */

import type { IncomingMessage, ServerResponse } from "node:http";

export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** Aborted when the client goes away before the response ended, or when the emulator closes. */
  readonly signal: AbortSignal;
  /** Path without the query string. */
  readonly path: string;
}

export function openExchange(req: IncomingMessage, res: ServerResponse, shutdown: AbortSignal): Exchange {
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  if (shutdown.aborted) abort();
  else shutdown.addEventListener("abort", abort, { once: true });
  res.once("close", () => {
    shutdown.removeEventListener("abort", abort);
    if (!res.writableEnded) abort();
  });
  const url = req.url ?? "/";
  const query = url.indexOf("?");
  return { req, res, signal: controller.signal, path: query >= 0 ? url.slice(0, query) : url };
}

export type BodyResult =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly reason: "too_large" | "aborted" };

/** Reads the whole body, up to `maxBytes`. A larger body is left unread (and discarded). */
export function readBody(exchange: Exchange, maxBytes: number): Promise<BodyResult> {
  const { req, signal } = exchange;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: BodyResult): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      resolve(result);
    };
    const onAbort = (): void => finish({ ok: false, reason: "aborted" });
    const tooLarge = (): void => {
      req.removeAllListeners("data");
      req.resume();
      finish({ ok: false, reason: "too_large" });
    };
    if (Number(req.headers["content-length"] ?? 0) > maxBytes) return tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    signal.addEventListener("abort", onAbort, { once: true });
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return tooLarge();
      chunks.push(chunk);
    });
    req.once("end", () => finish({ ok: true, text: Buffer.concat(chunks).toString("utf8") }));
    req.once("error", onAbort);
  });
}

export type JsonBody =
  | { readonly ok: true; readonly value: Record<string, unknown> }
  | { readonly ok: false; readonly problem: "empty" | "syntax" | "not_object"; readonly detail: string };

/** Parses a request body that must be one JSON object. */
export function parseJsonObject(text: string): JsonBody {
  if (text.trim() === "") return { ok: false, problem: "empty", detail: "empty body" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: "syntax", detail: error instanceof Error ? error.message : String(error) };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      ok: false,
      problem: "not_object",
      detail: `expected a JSON object, got ${Array.isArray(value) ? "an array" : typeof value}`,
    };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

export type JsonRequest =
  JsonBody | { readonly ok: false; readonly problem: "too_large" | "aborted"; readonly detail: string };

/** Reads and parses a body that must be one JSON object of at most `maxBytes`. */
export async function readJsonObject(exchange: Exchange, maxBytes: number): Promise<JsonRequest> {
  const body = await readBody(exchange, maxBytes);
  if (!body.ok) {
    const detail =
      body.reason === "too_large" ? `request body larger than ${maxBytes} bytes` : "client went away";
    if (body.reason === "too_large") exchange.res.setHeader("connection", "close");
    return { ok: false, problem: body.reason, detail };
  }
  return parseJsonObject(body.text);
}

/** Sends a complete JSON response with its length. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  contentType = "application/json",
): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader("content-type", contentType);
  res.setHeader("content-length", Buffer.byteLength(text));
  res.end(text);
}

export function sendText(res: ServerResponse, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader("content-type", "text/plain; charset=utf-8");
  res.setHeader("content-length", Buffer.byteLength(text));
  res.end(text);
}

/** Writes a chunk; when the socket's buffer is full, waits for 'drain' (or the client leaving). */
export async function writeChunk(exchange: Exchange, chunk: string): Promise<void> {
  const { res, signal } = exchange;
  if (res.write(chunk) || signal.aborted) return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      res.off("drain", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    res.on("drain", done);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Writes a chunk (possibly empty: then only the headers) and waits until it left for the kernel. */
export function writeFlushed(res: ServerResponse, chunk: string): Promise<void> {
  return new Promise((resolve) => {
    res.write(chunk, () => resolve());
  });
}

/** Drops the connection abruptly, as a crashing engine would. */
export function cutConnection(exchange: Exchange): void {
  exchange.res.socket?.destroy();
  exchange.res.destroy();
}

/** Waits `ms` milliseconds, or less if the signal fires. Never rejects. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Resolves when the signal fires (a hung request waits here). */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

/** Lets other connections run (used between tokens when no delay is configured). */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
