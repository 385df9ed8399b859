/**
 * The last step of an attempt (attempt.ts): an upstream's successful reply, from its first byte,
 * relayed to the client — collected whole and answered at once (non-streamed: failover stays possible
 * until then), or streamed with backpressure, corked per tick, and cut the way the dialect's clients
 * notice when the upstream breaks after its first byte.
 * Must not know: how the upstream was chosen or reached, what an error reply means.
 */

import type { Workload } from "../history/workload-history.js";
import { CANCELLED, COMPLETED, type Attempt, type AttemptRun } from "./attempt-run.js";
import { countTokens, type TokenCounts } from "@pair/dialects";
import { ROUTE_REASON_HEADER } from "../context/index.js";
import { OFF_LAN_HEADER, SERVED_BY_HEADER } from "./forward-deps.js";
import { describe, PeerSilent, scrubbedTail } from "./upstream-failures.js";
import { CappedBody, type UpstreamExchange, type UpstreamHead } from "./upstream-exchange.js";

/** A good reply from its first byte: the exchange to read the rest from, the client's headers. */
export interface GoodReply {
  readonly exchange: UpstreamExchange;
  readonly headers: Record<string, string>;
  readonly first: Buffer | undefined;
}

/** The client's reply headers for a successful upstream reply. */
export function replyHeaders(a: AttemptRun, head: UpstreamHead): Record<string, string> {
  const p = a.plan;
  // Built by assignment: a spread in an object literal followed by more properties is slow in V8.
  const headers: Record<string, string> = {};
  headers[SERVED_BY_HEADER] = a.fr.workload.servingNode ?? a.deps.nodeName;
  if (a.fr.workload.offLan) headers[OFF_LAN_HEADER] = "1";
  // context: say when windows decided the route
  if (a.fr.workload.routeReason !== undefined) headers[ROUTE_REASON_HEADER] = a.fr.workload.routeReason;
  headers["content-type"] = p.passthrough
    ? String(head.headers["content-type"] ?? p.contentType)
    : p.contentType;
  if (p.stream) headers["cache-control"] = "no-cache";
  return headers;
}

/**
 * A non-streamed reply is small: collect it whole, then answer. Up to the cap: past it the
 * upstream's connection is cut at once, nothing more is buffered.
 */
export async function relayWhole(a: AttemptRun, reply: GoodReply): Promise<Attempt> {
  const { exchange, headers, first } = reply;
  const { deps, fr, plan: p } = a;
  const body = new CappedBody(exchange, a.maxBodyBytes);
  const collect = (c: Buffer) => {
    a.heardMs = deps.clock.now().monoMs;
    body.push(c);
  };
  if (first !== undefined) collect(first);
  try {
    if (first !== undefined && !body.over && (await exchange.pump(collect)) === "closed") return CANCELLED;
  } catch (cause) {
    if (fr.signal.aborted) return CANCELLED;
    if (!body.over) return a.unreachable(`the reply broke: ${describe(cause)}`);
  }
  if (body.over) return a.tooLarge();
  const whole = Buffer.concat(body.chunks);
  const raw = deps.redactor?.redactBytes(whole) ?? whole;
  const parsed = parseMaybeJson(raw.toString("utf8"));
  const counts: TokenCounts = {};
  countTokens(parsed, counts);
  const out = p.passthrough ? raw : JSON.stringify(p.translateJson(parsed, deps.clock.now().wallMs));
  headers["content-length"] = String(Buffer.byteLength(out));
  fr.res.writeHead(200, headers);
  fr.res.end(out);
  applyCounts(fr.workload, counts);
  return COMPLETED;
}

/** A streamed reply, from its first chunk: the headers leave with it, in one write. */
export async function relayStream(a: AttemptRun, reply: GoodReply): Promise<Attempt> {
  const { exchange, headers, first } = reply;
  const { deps, fr, plan: p } = a;
  const res = fr.res;
  res.writeHead(200, headers);
  const counts: TokenCounts = {};
  const relay = p.relay(deps.clock.now().wallMs, counts);
  // Only a rented node is sent a secret, so only its stream could echo one back.
  const scrubber =
    a.upstream.kind === "rented" && deps.redactor?.active === true ? deps.redactor.stream() : undefined;
  // Chunks that arrive in the same tick leave in one write: cork on the first, uncork on the next tick.
  let corked = false;
  const uncork = () => {
    corked = false;
    res.uncork();
    fr.timeline?.mark("firstFlushed");
  };
  const forwardChunk = (chunk: Buffer) => {
    if (a.watched) a.heardMs = deps.clock.now().monoMs;
    const out = relay.push(chunk);
    const relayed = p.passthrough ? chunk : out;
    const data = scrubber === undefined ? relayed : scrubber.push(relayed);
    if (data.length === 0) return true;
    if (!corked) {
      corked = true;
      res.cork();
      process.nextTick(uncork);
    }
    return res.write(data);
  };
  // The reply's end (the relay's tail, then the chunked terminator or the HTTP/2 trailer) is written
  // in the tick of the upstream's last chunk, while still corked: it leaves in the same write.
  let ended = false;
  const endReply = () => {
    ended = true;
    const tail = scrubbedTail(relay.end(), scrubber);
    if (tail.length > 0) res.write(tail);
    res.end();
  };
  try {
    if (first !== undefined) {
      forwardChunk(first);
      fr.timeline?.mark("firstWritten");
      if ((await exchange.pump(forwardChunk, endReply)) === "closed") return CANCELLED;
    }
    if (!ended) endReply();
  } catch (cause) {
    if (fr.signal.aborted) return CANCELLED;
    // After the first byte there is no failover: end the stream the way the dialect's clients notice.
    if (!ended) {
      const tail = scrubbedTail(relay.end(), scrubber);
      if (tail.length > 0 && !res.destroyed) res.write(tail);
    }
    res.destroy();
    applyCounts(fr.workload, counts);
    const reason = a.abort.reason;
    const detail = reason instanceof PeerSilent ? reason.message : describe(cause);
    return { kind: "done", outcome: { kind: "cut", detail } };
  }
  applyCounts(fr.workload, counts);
  return COMPLETED;
}

function applyCounts(w: Workload, counts: TokenCounts): void {
  if (counts.tokensIn !== undefined) w.tokensIn = counts.tokensIn;
  if (counts.tokensOut !== undefined) w.tokensOut = counts.tokensOut;
}

export function parseMaybeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
