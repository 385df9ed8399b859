/**
 * The name a cluster port gives away over plain HTTP: a PAIR node answers any request but the
 * pairing handshake with 404 `{"node": "<name>"}` (pairing-server.ts). That is all discovery learns
 * of a static `peers` address that none of our pinned peers answers at: a label for the user, who
 * pairs with `pair join ADDRESS --pin PIN` (the PIN, not this answer, authenticates the node). No
 * TLS here, so nothing to verify and nothing trusted; the answer is bounded in size and time.
 * Must not know: the trust store, mDNS, what the answer leads to.
 */

import { request } from "undici";
import { isPeerName, formatHostPort, type HostPort } from "../peers/index.js";

const MAX_NAME_ANSWER_BYTES = 4 * 1024;

/** The name a PAIR node's cluster port gives to a plain-HTTP `GET /`, or undefined. */
export async function readPortName(
  address: HostPort,
  options: { readonly timeoutMs: number; readonly signal?: AbortSignal },
): Promise<string | undefined> {
  const signals = [
    AbortSignal.timeout(options.timeoutMs),
    ...(options.signal === undefined ? [] : [options.signal]),
  ];
  try {
    const res = await request(`http://${formatHostPort(address)}/`, {
      signal: AbortSignal.any(signals),
      reset: true,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    let text = "";
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      text += chunk.toString("utf8");
      if (text.length > MAX_NAME_ANSWER_BYTES) return undefined;
    }
    if (res.statusCode !== 404) return undefined;
    const name = (JSON.parse(text) as { node?: unknown } | null)?.node;
    return typeof name === "string" && isPeerName(name) ? name : undefined;
  } catch {
    return undefined;
  }
}
