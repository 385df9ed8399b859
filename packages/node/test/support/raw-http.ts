// One HTTP/1.1 request exactly as written (any Host, Origin or Sec-Fetch-Site, a body sent in timed
// pieces), the way a browser or an attacker's script sends it; fetch would rewrite some of these.
import { request } from "node:http";

export interface RawAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
  /** The body as JSON (undefined when it is not JSON). */
  readonly json: unknown;
}

export interface RawRequest {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** The whole body, or pieces each written after its own delay (ms); the request then stays open. */
  readonly body?: string | readonly { readonly afterMs: number; readonly text: string }[];
  /** Give up (reject) after this long without a whole answer (default 10 s). */
  readonly timeoutMs?: number;
}

/** Sends `req` to `url` (the full URL, its host the socket's address) and reads the whole answer. */
export function rawHttp(url: string, req: RawRequest = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const r = request(url, { method: req.method ?? "GET", headers: req.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    r.on("error", reject);
    r.setTimeout(req.timeoutMs ?? 10_000, () => r.destroy(new Error("rawHttp: no whole answer in time")));
    const body = req.body;
    if (body === undefined || typeof body === "string") {
      r.end(body);
      return;
    }
    void (async () => {
      for (const piece of body) {
        await new Promise((done) => setTimeout(done, piece.afterMs));
        if (r.destroyed) return;
        r.write(piece.text);
      }
    })();
  });
}
