/**
 * The request pipeline both dialects share: take a slot (queue or 503), apply the injected fault,
 * then generate paced tokens and write them with backpressure, stopping when the client leaves.
 * Dialects supply the wire format (ResponseFormat) and their error bodies (FailureWriter); this
 * module knows no JSON shapes and no routes.
 */

import type { EngineContext, FailureWriter } from "./engine-context.js";
import type { InferenceCall, Outcome } from "./engine-stats.js";
import {
  cutConnection,
  pause,
  sendJson,
  untilAborted,
  writeChunk,
  writeFlushed,
  yieldToEventLoop,
  type Exchange,
} from "./http-exchange.js";
import type { FinishReason, ReplyPlan } from "./token-generator.js";

/** Monotonic instants (ms, from the emulator's clock) of one generation. */
export interface GenerationTimings {
  readonly receivedMs: number;
  readonly grantedMs: number;
  readonly firstTokenMs: number;
  readonly doneMs: number;
}

export interface GenerationResult {
  /** The whole reply; empty for streams (their text went out token by token). */
  readonly text: string;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly finishReason: FinishReason;
  readonly timings: GenerationTimings;
}

/** A dialect's rendering of one generation. */
export interface ResponseFormat {
  readonly streamContentType: string;
  /** Bytes that precede the first token in a stream (OpenAI's role chunk); sent with it. */
  streamHead(): string;
  streamToken(token: string): string;
  /** Final chunk(s) of a stream, including any terminator. */
  streamTail(result: GenerationResult): string;
  /** The JSON body of a non-streaming answer. */
  wholeBody(result: GenerationResult): unknown;
  readonly wholeContentType: string;
}

export interface GenerationJob {
  readonly plan: ReplyPlan;
  readonly promptTokens: number;
  readonly stream: boolean;
  readonly format: ResponseFormat;
  /** Monotonic ms at which the request arrived. */
  readonly receivedMs: number;
  /** The configured name of the model generating (reported to `onUsage`). */
  readonly model: string;
}

/** Work done while holding a slot; `cutAfterTokens` is set when a cut fault acts on this request. */
export type SlotWork = (cutAfterTokens: number | undefined) => Promise<Outcome>;

/** Takes a slot, applies the fault decision, runs the work, and settles the call's outcome. */
export async function runInference(
  ctx: EngineContext,
  exchange: Exchange,
  call: InferenceCall,
  writeFailure: FailureWriter,
  work: SlotWork,
): Promise<void> {
  const acquired = await ctx.limiter.acquire(exchange.signal);
  if (acquired === "aborted") return call.settle("cancelled");
  if (acquired === "full") {
    writeFailure(exchange.res, { kind: "overloaded" });
    return call.settle("rejected503");
  }
  try {
    const fault = ctx.faults.decide();
    switch (fault.kind) {
      case "hang":
        await untilAborted(exchange.signal);
        return call.settle("cancelled");
      case "fail":
        writeFailure(exchange.res, { kind: "injected", status: fault.status });
        return call.settle("faulted");
      case "cut":
        return call.settle(await work(fault.afterTokens));
      case "none":
        return call.settle(await work(undefined));
    }
  } finally {
    ctx.limiter.release();
  }
}

const YIELD_EVERY_TOKENS = 256;

/** Generates the job's tokens at the configured pace and writes them as the format says. */
export async function generate(
  ctx: EngineContext,
  exchange: Exchange,
  job: GenerationJob,
  cutAfterTokens: number | undefined,
): Promise<Outcome> {
  const { res, signal } = exchange;
  const { clock, firstTokenDelayMs, tokenDelayMs } = ctx.options;
  const grantedMs = clock.now().monoMs;
  const paceStart = performance.now();
  const waitForToken = async (index: number): Promise<void> => {
    // Due times count from the grant, so timer lateness does not accumulate over a long reply.
    // Timers fire on a millisecond loop clock: re-check, and accept being early by under 1 ms.
    const due = paceStart + firstTokenDelayMs + index * tokenDelayMs;
    let slept = false;
    for (let wait = due - performance.now(); wait >= 1 && !signal.aborted; wait = due - performance.now()) {
      await pause(Math.ceil(wait), signal);
      slept = true;
    }
    if (!slept && index > 0 && index % YIELD_EVERY_TOKENS === 0) await yieldToEventLoop();
  };
  if (job.stream) {
    res.statusCode = 200;
    res.setHeader("content-type", job.format.streamContentType);
    res.setHeader("cache-control", "no-cache");
  }
  let head = job.stream ? job.format.streamHead() : "";
  let text = "";
  let sent = 0;
  let firstTokenMs: number | undefined;
  const cut = async (): Promise<Outcome> => {
    if (job.stream && sent === 0) await writeFlushed(res, head);
    cutConnection(exchange);
    return "faulted";
  };

  if (cutAfterTokens === 0) return cut();
  for (const token of job.plan.tokens()) {
    await waitForToken(sent);
    if (signal.aborted) return "cancelled";
    ctx.stats.tokensGenerated += 1;
    sent += 1;
    firstTokenMs ??= clock.now().monoMs;
    // A cut at or beyond the reply's length drops the connection before the final chunk.
    const cutHere =
      cutAfterTokens !== undefined && (sent === cutAfterTokens || sent === job.plan.completionTokens);
    if (job.stream) {
      const chunk = head + job.format.streamToken(token);
      head = "";
      if (cutHere) {
        await writeFlushed(res, chunk);
        return cut();
      }
      await writeChunk(exchange, chunk);
    } else {
      text += token;
      if (cutHere) return cut();
    }
  }
  if (sent === 0) await waitForToken(0);
  if (cutAfterTokens !== undefined) return cut();
  if (signal.aborted) return "cancelled";

  const doneMs = clock.now().monoMs;
  const result: GenerationResult = {
    text,
    promptTokens: job.promptTokens,
    completionTokens: sent,
    finishReason: job.plan.finishReason,
    timings: { receivedMs: job.receivedMs, grantedMs, firstTokenMs: firstTokenMs ?? doneMs, doneMs },
  };
  if (job.stream) res.end(head + job.format.streamTail(result));
  else sendJson(res, 200, job.format.wholeBody(result), job.format.wholeContentType);
  ctx.options.onUsage?.(
    { model: job.model, promptTokens: job.promptTokens, completionTokens: sent },
    exchange.req,
  );
  return "completed";
}
