/**
 * One attempt on one upstream, in steps: plan the exchange; prepare the upstream (a managed rented
 * node's wake); await the reply's head, asking a warming rented node again within its cold-start
 * budget; classify an error reply (upstream-failures.ts's table); relay a good one (relay.ts).
 * Nothing reaches the client before the first body byte, so every failure before it fails over.
 * Must not know: which upstreams there are or their order (upstreams.ts), the attempt loop (forward.ts).
 */

import { contextRefusalOf, ollamaBodyFor, type RequestFit } from "../context/index.js";
import { pairErrorHeaders, pairErrorOfInvalidRequest, planExchange } from "@pair/dialects";
import { engineTarget } from "../engines/engine-inventory.js";
import { AttemptRun, CANCELLED, sleep, type Attempt } from "./attempt-run.js";
import type { ForwardDeps, ForwardRequest, Upstream } from "./forward-deps.js";
import { parseMaybeJson, relayStream, relayWhole, replyHeaders } from "./relay.js";
import {
  classifyErrorReply,
  describe,
  isConnectFailure,
  pairErrorOf,
  peerClosedHint,
} from "./upstream-failures.js";
import { UpstreamBodyTooLarge, type UpstreamExchange, type UpstreamHead } from "./upstream-exchange.js";
import { recordServed } from "./upstreams.js";

/** How often a warming rented node is asked again. */
const WARM_RETRY_MS = 1_000;

export async function attemptOn(
  deps: ForwardDeps,
  fr: ForwardRequest,
  upstream: Upstream,
  fit: RequestFit,
): Promise<Attempt> {
  const plan = planExchange({
    route: fr.route,
    request: fr.request,
    raw: fr.raw,
    engineApi: upstream.api,
    id: fr.id,
    startedMs: deps.clock.now().wallMs,
    node: deps.nodeName,
    ...(upstream.model === undefined ? {} : { upstreamModel: upstream.model }),
  });
  if (!plan.ok)
    return { kind: "done", outcome: { kind: "error", error: pairErrorOfInvalidRequest(plan.error) } };
  const p = plan.value;
  // context: a local Ollama engine gets the num_ctx the prompt needs (never a silent truncation)
  const body =
    upstream.kind === "engine" && upstream.api === "ollama"
      ? ollamaBodyFor(
          fit,
          deps.inventory,
          upstream.id,
          upstream.model ?? fr.request.model,
          fr.request,
          p.body,
        )
      : p.body;
  const a = new AttemptRun(deps, fr, upstream, body === p.body ? p : { ...p, body });
  let result: Attempt = CANCELLED;
  try {
    result = await run(a, fit);
    return result;
  } finally {
    a.close(result);
  }
}

async function run(a: AttemptRun, fit: RequestFit): Promise<Attempt> {
  const baseUrl = await prepare(a);
  if (typeof baseUrl !== "string") return baseUrl;
  const head = await awaitHead(a, baseUrl);
  if (!("exchange" in head)) return head;
  a.fr.timeline?.mark("upstreamHeaders");
  if (head.head.statusCode >= 400) return answerError(a, head.exchange, head.head.statusCode, fit);
  return relay(a, head.exchange, head.head);
}

/** Where to send the request: the upstream's base URL, or a managed rented node's once woken. */
async function prepare(a: AttemptRun): Promise<string | Attempt> {
  const upstream = a.upstream;
  if (upstream.kind !== "rented" || upstream.prepare === undefined) return upstream.baseUrl;
  // A managed rented node may first have to be resumed (wake on request): warming, within the budget.
  a.warming();
  // Only this rare path pays for an AbortSignal (the wake's HTTP calls take one).
  const wake = new AbortController();
  const onAbort = () => wake.abort(a.abort.reason);
  a.abort.once("abort", onAbort);
  const prepared = await upstream.prepare(wake.signal).finally(() => a.abort.off("abort", onAbort));
  if (prepared.ok) return prepared.baseUrl;
  const interrupted = a.interrupted();
  // The budget ran out during the wake: the wake's own error says what it was waiting for.
  if (interrupted !== undefined && interrupted !== CANCELLED && prepared.error.code === "cold_start_timeout")
    return { kind: "next", error: prepared.error };
  return interrupted ?? { kind: "next", error: prepared.error };
}

/**
 * Sends the request and waits for the reply's head. A rented node scaled to zero or starting
 * answers 503: it is warming, not failing; it is asked again each second within its cold-start
 * budget (the first-byte timer bounds the whole wait).
 */
async function awaitHead(
  a: AttemptRun,
  baseUrl: string,
): Promise<{ readonly exchange: UpstreamExchange; readonly head: UpstreamHead } | Attempt> {
  const { deps, fr, upstream } = a;
  const target = engineTarget(baseUrl, a.plan.enginePath);
  for (;;) {
    fr.timeline?.mark("upstreamSent");
    const exchange = a.newExchange();
    let head: UpstreamHead;
    try {
      head = await exchange.start(upstream.dispatcher, {
        origin: target.origin,
        path: target.path,
        method: "POST",
        headers: requestHeaders(deps, upstream, a.plan.stream),
        body: a.plan.body,
        headersTimeout: a.timeoutMs,
        bodyTimeout: 0,
      });
    } catch (cause) {
      return a.interrupted(cause) ?? notReached(a, cause);
    }
    if (head.statusCode !== 503 || upstream.kind !== "rented") {
      a.warmed("answered");
      return { exchange, head };
    }
    await exchange.discard(a.maxBodyBytes);
    a.warming();
    const waitMs = Math.min(WARM_RETRY_MS, Math.max(0, a.deadlineMs - deps.clock.now().monoMs));
    if (!(await sleep(deps.timers.after, waitMs, a.abort))) return a.interrupted() ?? a.timedOut();
  }
}

/** The request never got an answer: a peer that refuses this node's certificate is down for it. */
function notReached(a: AttemptRun, cause: unknown): Attempt {
  const hint = peerClosedHint(a.upstream, cause);
  const detail = describe(cause) + hint;
  const next = a.unreachable(detail);
  return (isConnectFailure(cause) || hint !== "") && next.kind === "next"
    ? { ...next, markDown: detail }
    : next;
}

/** An error reply before the first byte: the next upstream, or the client's answer (ERROR_REPLY_TABLE). */
async function answerError(
  a: AttemptRun,
  exchange: UpstreamExchange,
  status: number,
  fit: RequestFit,
): Promise<Attempt> {
  const { deps, fr, upstream } = a;
  let text = "";
  try {
    // Scrubbed before anything reads it: every message, log line and reply below derives from it.
    text = a.scrub((await exchange.collect(a.maxBodyBytes)).toString("utf8"));
  } catch (cause) {
    if (cause instanceof UpstreamBodyTooLarge) return a.tooLarge();
  }
  const parsed = parseMaybeJson(text);
  const given = pairErrorOf(parsed);
  const verdict = classifyErrorReply({ upstream: upstream.kind, status, given });
  if (verdict.code === "credential_rejected" && upstream.kind === "rented") {
    deps.rented?.credentialRejected(upstream.name, status);
    const message =
      `${upstream.label} refused its credential (HTTP ${status}); set it again with ` +
      "`pair credential set NAME` on its sponsor";
    return { kind: "next", error: { code: "credential_rejected", message, node: upstream.name } };
  }
  // context: a refusal for the prompt's length fails over to a node with a larger window
  const tooLong = contextRefusalOf(status, parsed);
  if (tooLong !== undefined) {
    fit.refused(upstream.id, upstream.label, tooLong.windowTokens);
    fr.workload.routeReason = "context";
    const message = `${upstream.label} refused the prompt as too long: ${tooLong.message}`;
    return { kind: "next", error: { code: "context_too_long", message, node: deps.nodeName } };
  }
  if (verdict.failover) {
    // A peer's own code stays the error: the client sees why that node could not serve.
    if (given !== undefined)
      return { kind: "next", error: { ...given, message: `${upstream.label}: ${given.message}` } };
    return a.unreachable(`HTTP ${status}: ${text.slice(0, 200)}`);
  }
  const reply = a.plan.translateError(status, parsed);
  const error = { code: given?.code ?? "invalid_request", message: text, node: deps.nodeName } as const;
  const headers = given === undefined ? {} : { headers: pairErrorHeaders(given.code) };
  return {
    kind: "done",
    outcome: { kind: "error", error, status: reply.status, body: reply.body, ...headers },
  };
}

/** A good reply's first byte, then the reply relayed whole or streamed. */
async function relay(a: AttemptRun, exchange: UpstreamExchange, head: UpstreamHead): Promise<Attempt> {
  const { deps, fr } = a;
  let first: Buffer | undefined;
  try {
    first = await exchange.first();
  } catch (cause) {
    return a.interrupted(cause) ?? a.unreachable(`the reply broke before its first byte: ${describe(cause)}`);
  }
  a.heard();
  fr.timeline?.mark("firstRead");
  fr.workload.firstByteMs = Math.round(deps.clock.now().monoMs - a.startedMs);
  recordServed(deps, a.upstream, fr.workload, head.headers);
  const reply = { exchange, headers: replyHeaders(a, head), first };
  return a.plan.stream ? relayStream(a, reply) : relayWhole(a, reply);
}

/** Each upstream's request headers, streamed and not: made once per upstream, not per request. */
const upstreamHeaders = new WeakMap<Upstream, readonly [Record<string, string>, Record<string, string>]>();

function requestHeaders(deps: ForwardDeps, upstream: Upstream, stream: boolean): Record<string, string> {
  let pair = upstreamHeaders.get(upstream);
  if (pair === undefined) {
    // What a rented node is sent (its token, a pod's key) is a secret the redactor must know.
    if (upstream.kind === "rented")
      for (const value of Object.values(upstream.headers))
        deps.redactor?.add(value.replace(/^Bearer\s+/i, ""));
    const json = { ...upstream.headers, "content-type": "application/json" };
    pair = [
      { ...json, accept: "text/event-stream, application/x-ndjson" },
      { ...json, accept: "application/json" },
    ];
    upstreamHeaders.set(upstream, pair);
  }
  return stream ? pair[0] : pair[1];
}
