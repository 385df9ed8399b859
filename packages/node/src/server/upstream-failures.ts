/**
 * What an upstream's failure means, for the forwarding loop: the errors it raises itself (no first
 * byte in time, a silent peer), how a transport error reads (a connect failure, a headers timeout, a
 * peer that closed on us), what an error reply means (`classifyErrorReply`: one table, read against
 * the error catalogue), a rented node's failure as a peer may be told it (a code and a fixed text,
 * never its address), and a stream's tail with the secrets scrubbed.
 * Must not know: the attempt loop (attempt.ts), how replies are relayed.
 */

import { isPairErrorCode, PAIR_ERROR_CODES, type PairError, type PairErrorCode } from "@pair/dialects";
import type { StreamRedactor } from "../credentials/index.js";
import { failureKindOf, peerReasonText } from "@pair/sponsor";
import type { Upstream } from "./forward-deps.js";

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
  if (upstream.kind !== "rented") return error;
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
  if (upstream.kind !== "peer" || (code !== "UND_ERR_SOCKET" && code !== "ECONNRESET")) return "";
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

/** What an error reply (a status of 400 or more, before the first byte) says, as the table reads it. */
export interface ErrorReplyFacts {
  readonly upstream: Upstream["kind"];
  readonly status: number;
  /** The PAIR error a peer answered with (its code, message and node), if it is one. */
  readonly given: PairError | undefined;
}

interface ErrorReplyRule {
  /** Why the row is there. */
  readonly means: string;
  readonly when: (r: ErrorReplyFacts) => boolean;
  readonly code: (r: ErrorReplyFacts) => PairErrorCode;
}

/**
 * What an upstream's error reply means, first matching row first. The code a row gives decides,
 * through the error catalogue, whether the next upstream is tried: when a retry may help or another
 * node may serve (`retryable`, `otherNodeMayServe`); otherwise the reply is the client's answer.
 */
export const ERROR_REPLY_TABLE: readonly ErrorReplyRule[] = [
  {
    means: "a rented node refused its credential",
    when: (r) => r.upstream === "rented" && (r.status === 401 || r.status === 403),
    code: () => "credential_rejected",
  },
  {
    means: "a peer said what failed, with PAIR's code",
    when: (r) => r.given !== undefined,
    code: (r) => r.given!.code,
  },
  { means: "the engine lost the model", when: (r) => r.status === 404, code: () => "model_not_found" },
  {
    means: "the engine is busy or failed",
    when: (r) => r.status === 429 || r.status >= 500,
    code: () => "upstream_error",
  },
  { means: "the engine refused the request itself", when: () => true, code: () => "invalid_request" },
];

/** An error reply's code, and whether forwarding moves on to the next upstream for it. */
export function classifyErrorReply(facts: ErrorReplyFacts): {
  readonly code: PairErrorCode;
  readonly failover: boolean;
} {
  const rule = ERROR_REPLY_TABLE.find((r) => r.when(facts))!;
  const code = rule.code(facts);
  const spec: { readonly retryable: boolean; readonly otherNodeMayServe: boolean } = PAIR_ERROR_CODES[code];
  return { code, failover: spec.retryable || spec.otherNodeMayServe };
}

/** A PAIR error in a reply body (either envelope), as a peer answers with it. */
export function pairErrorOf(body: unknown): PairError | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const o = body as {
    code?: unknown;
    node?: unknown;
    error?: { code?: unknown; message?: unknown; node?: unknown } | string;
  };
  const inner = typeof o.error === "object" && o.error !== null ? o.error : undefined;
  const code = inner === undefined ? o.code : inner.code;
  if (typeof code !== "string" || !isPairErrorCode(code)) return undefined;
  const message = inner === undefined ? o.error : inner.message;
  const node = inner === undefined ? o.node : inner.node;
  return {
    code,
    message: typeof message === "string" ? message : code,
    ...(typeof node === "string" ? { node } : {}),
  };
}
