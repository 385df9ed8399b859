/**
 * Reading a request body with bounds. A body over the limit is refused as soon as it is seen to be
 * too large (by Content-Length or by counting), without buffering the rest. A body that stops
 * arriving (no byte for `idleMs`) is given up with 408: headers have Node's own timeout, bodies this one.
 * Must not know: what the body means.
 */

import type { IncomingMessage } from "node:http";

/** Default longest silence while a request body arrives. */
export const BODY_IDLE_TIMEOUT_MS = 30_000;

export type BodyResult =
  | { readonly ok: true; readonly bytes: Buffer }
  | {
      readonly ok: false;
      readonly status: 413 | 400 | 408;
      readonly code: "invalid_request" | "request_timeout";
      readonly message: string;
    };

export function readBody(
  req: IncomingMessage,
  maxBytes: number,
  idleMs: number = BODY_IDLE_TIMEOUT_MS,
): Promise<BodyResult> {
  const tooLarge: BodyResult = {
    ok: false,
    status: 413,
    code: "invalid_request",
    message: `request body over ${maxBytes} bytes`,
  };
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume();
    return Promise.resolve(tooLarge);
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    // A Node timer, not the runtime's: `refresh()` re-arms it on every chunk without a new timer,
    // which Timers has no word for; the bound is a socket's, in real time.
    // eslint-disable-next-line no-restricted-globals -- refreshed per chunk, see above
    const idle = setTimeout(() => {
      finish({
        ok: false,
        status: 408,
        code: "request_timeout",
        message: `request body: nothing arrived for ${idleMs / 1000} s`,
      });
      // Stop reading: the reply goes out with `connection: close`, and nothing more is buffered.
      req.pause();
    }, idleMs);
    idle.unref();
    const finish = (r: BodyResult) => {
      if (done) return;
      done = true;
      clearTimeout(idle);
      resolve(r);
    };
    const failed = (message: string): BodyResult => ({
      ok: false,
      status: 400,
      code: "invalid_request",
      message,
    });
    req.on("data", (chunk: Buffer) => {
      if (done) return;
      idle.refresh();
      size += chunk.length;
      if (size > maxBytes) {
        finish(tooLarge);
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => finish({ ok: true, bytes: Buffer.concat(chunks, size) }));
    req.on("error", (e) => finish(failed(`request body: ${e.message}`)));
    req.on("aborted", () => finish(failed("request body: client aborted")));
    req.on("close", () => finish(failed("request body: client aborted")));
  });
}
