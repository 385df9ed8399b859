/**
 * One short JSON question to an engine or a peer, for the model routes (`/api/ps`, `/api/show`,
 * `/api/tags`): a JSON object back within the timeout, or undefined (down, slow, not 200, not an
 * object) so that one silent source leaves only its own entries out.
 * Must not know: what is asked, who is asking.
 */

import type { Dispatcher } from "undici";
import { engineTarget } from "../engines/engine-inventory.js";
import { boundedText } from "../http/bounded-text.js";
import { jsonNestsDeeperThan } from "../http/json-depth.js";

/** An engine or peer asked for model metadata answers within this, or is left out. */
export const ASK_TIMEOUT_MS = 2_000;

export interface JsonQuestion {
  readonly dispatcher: Dispatcher;
  readonly baseUrl: string;
  readonly path: string;
  readonly method: "GET" | "POST";
  /** Sent as JSON (POST only). */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

export async function askJson(q: JsonQuestion): Promise<Record<string, unknown> | undefined> {
  const target = engineTarget(q.baseUrl, q.path);
  try {
    const res = await q.dispatcher.request({
      origin: target.origin,
      path: target.path,
      method: q.method,
      ...(q.method === "POST" ? { body: JSON.stringify(q.body ?? {}) } : {}),
      headers: { ...(q.method === "POST" ? { "content-type": "application/json" } : {}), ...q.headers },
      headersTimeout: ASK_TIMEOUT_MS,
      bodyTimeout: ASK_TIMEOUT_MS,
      signal: AbortSignal.timeout(ASK_TIMEOUT_MS),
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      return undefined;
    }
    const text = await boundedText(res.body);
    if (jsonNestsDeeperThan(Buffer.from(text))) return undefined;
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
