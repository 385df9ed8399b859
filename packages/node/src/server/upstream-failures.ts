/**
 * What an upstream's failure means, for the forwarding loop: the errors it raises itself (no first
 * byte in time, a silent peer), how a transport error reads (a connect failure, a headers timeout, a
 * peer that closed on us), a rented node's failure as a peer may be told it (a code and a fixed
 * text, never its address), and a stream's tail with the secrets scrubbed.
 * Must not know: the attempt loop (forward.ts), how replies are relayed.
 */

import type { PairError } from "../dialects/index.js";
import type { StreamRedactor } from "../credentials/index.js";
import { failureKindOf, peerReasonText } from "../rented/index.js";
import type { Upstream } from "./upstreams.js";

export class FirstByteTimeout extends Error {
  constructor() {
    super("no first byte in time");
  }
}

/** The peer was found down and had sent nothing for its silence window. */
export class PeerSilent extends Error {
  constructor(label: string, silentMs: number) {
    super(`${label} was found down and sent nothing for ${silentMs} ms`);
  }
}

/** A stream's last bytes, with what the scrubber held back in front of them. */
export function scrubbedTail(tail: string, scrubber: StreamRedactor | undefined): Buffer | string {
  if (scrubber === undefined) return tail;
  const out = scrubber.push(tail);
  const held = scrubber.end();
  return held.length === 0 ? out : Buffer.concat([out, held]);
}

/**
 * A rented node's failure as a peer is told it: its code and a fixed text, never the detail (a
 * raw transport error names the endpoint's address). Other upstreams' errors pass as they are.
 */
export function forPeer(upstream: Upstream, error: PairError): PairError {
  if (!upstream.id.startsWith("rented:")) return error;
  const kind =
    error.code === "credential_rejected"
      ? "credential_rejected"
      : error.code === "cold_start_timeout"
        ? "timeout"
        : failureKindOf(error.message);
  return { ...error, message: `${upstream.label}: ${peerReasonText(kind)}` };
}

export function describe(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : "";
    return `${typeof code === "string" ? `${code} ` : ""}${cause.message}${inner}`;
  }
  return String(cause);
}

/**
 * A paired peer that closes the connection before any answer: how a node that unpaired this one
 * refuses its certificate (TLS 1.3 checks it after the client is done, and no HTTP is ever read).
 */
export function peerClosedHint(upstream: Upstream, cause: unknown): string {
  const code = (cause as { code?: unknown } | null)?.code;
  if (!upstream.id.startsWith("peer:") || (code !== "UND_ERR_SOCKET" && code !== "ECONNRESET")) return "";
  return (
    " (it closed the connection before answering: it stopped, or it no longer trusts this node — " +
    "if it unpaired this one, pair again with `pair join`)"
  );
}

export function isHeadersTimeout(cause: unknown): boolean {
  return (cause as { code?: unknown } | null)?.code === "UND_ERR_HEADERS_TIMEOUT";
}

export function isConnectFailure(cause: unknown): boolean {
  const code = (cause as { code?: unknown } | null)?.code;
  const inner = (cause as { cause?: { code?: unknown } } | null)?.cause?.code;
  return [code, inner].some(
    (c) => c === "ECONNREFUSED" || c === "UND_ERR_CONNECT_TIMEOUT" || c === "EHOSTUNREACH",
  );
}
