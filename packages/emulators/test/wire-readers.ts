/**
 * Test helpers that read the emulator's wire exactly as a client would: SSE events and NDJSON
 * lines from a fetch response, raw HTTP over a socket, and a fixed clock. No assertions here.
 */

import { connect, type Socket } from "node:net";
import type { EmulatorClock } from "../src/index.js";

/** A clock that never moves: responses become byte-identical across runs. */
export const frozenClock: EmulatorClock = { now: () => ({ wallMs: Date.UTC(2026, 0, 1), monoMs: 1000 }) };

export function postJson(url: string, body: unknown, init: RequestInit = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...init,
  });
}

/** Splits an SSE body into the `data:` payloads of its events, checking the framing on the way. */
export function sseData(text: string): string[] {
  if (!text.endsWith("\n\n"))
    throw new Error(`SSE body does not end with a blank line: ${JSON.stringify(text.slice(-40))}`);
  return text
    .slice(0, -2)
    .split("\n\n")
    .map((event) => {
      if (!event.startsWith("data: ") || event.includes("\n"))
        throw new Error(`not a single data line: ${event}`);
      return event.slice("data: ".length);
    });
}

/** Parses an NDJSON body: one JSON object per line, each line ending in "\n". */
export function ndjson(text: string): Record<string, unknown>[] {
  if (!text.endsWith("\n")) throw new Error("NDJSON body does not end with a newline");
  return text
    .slice(0, -1)
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Reads a streamed body chunk by chunk until `count` chunks arrived, then cancels the body. */
export async function readChunks(response: Response, count: number): Promise<string[]> {
  const decoder = new TextDecoder();
  const chunks: string[] = [];
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    chunks.push(decoder.decode(chunk));
    if (chunks.length >= count) break;
  }
  return chunks;
}

/** Opens a raw TCP connection and sends one HTTP/1.1 POST with a JSON body. */
export function rawPost(port: number, path: string, body: unknown): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1" }, () => {
      const payload = JSON.stringify(body);
      socket.write(
        `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
      );
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

/** Polls `predicate` every few ms until it holds or `timeoutMs` passes. */
export async function waitFor(predicate: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error("waitFor: condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** What a fetch failed with: the cause's code (ECONNREFUSED, UND_ERR_SOCKET, …) or the message. */
export async function failureOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    return cause?.code ?? (error instanceof Error ? error.message : String(error));
  }
  return "no failure";
}
