/**
 * Reading a request body with a bound. A body over the limit is refused as soon as it is seen to be
 * too large (by Content-Length or by counting), without buffering the rest.
 * Must not know: what the body means.
 */

import type { IncomingMessage } from "node:http";

export type BodyResult =
  | { readonly ok: true; readonly bytes: Buffer }
  | { readonly ok: false; readonly status: 413 | 400; readonly message: string };

export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume();
    return Promise.resolve({ ok: false, status: 413, message: `request body over ${maxBytes} bytes` });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (r: BodyResult) => {
      if (done) return;
      done = true;
      resolve(r);
    };
    req.on("data", (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > maxBytes) {
        finish({ ok: false, status: 413, message: `request body over ${maxBytes} bytes` });
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => finish({ ok: true, bytes: Buffer.concat(chunks, size) }));
    req.on("error", (e) => finish({ ok: false, status: 400, message: `request body: ${e.message}` }));
    req.on("aborted", () => finish({ ok: false, status: 400, message: "request body: client aborted" }));
  });
}
