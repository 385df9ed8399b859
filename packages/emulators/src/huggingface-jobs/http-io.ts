/**
 * Reading a bounded JSON request body and writing a JSON or error reply, for the Jobs routes and
 * the exposed-port proxy (HF's error shape `{"error": "…"}`, reference §1.4).
 * Must not know: routes, jobs.
 */

import type { IncomingMessage, ServerResponse } from "node:http";

const MAX_BODY_BYTES = 1024 * 1024;

export type BodyRead = { ok: true; value: unknown } | { ok: false; message: string };

export function readJsonBody(req: IncomingMessage): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.once("error", () => resolve({ ok: false, message: "request aborted" }));
    req.once("end", () => {
      if (size > MAX_BODY_BYTES)
        return resolve({ ok: false, message: `body larger than ${MAX_BODY_BYTES} bytes` });
      const text = Buffer.concat(chunks).toString("utf8");
      if (text.trim() === "") return resolve({ ok: true, value: undefined });
      try {
        resolve({ ok: true, value: JSON.parse(text) as unknown });
      } catch (error) {
        resolve({ ok: false, message: error instanceof Error ? error.message : String(error) });
      }
    });
  });
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader("content-type", "application/json");
  res.setHeader("content-length", Buffer.byteLength(text));
  res.end(text);
}

export function sendError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: message });
}
