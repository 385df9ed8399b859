/**
 * Running batches: up to `maxConcurrentLines` lines at a time over every batch in progress (taken in
 * turn, so a small batch is not stuck behind a big one), each line run as a routed request of its own
 * (`runLine`: the cluster's routing, history and failover, behind users' requests in every
 * scheduler). A reply that a retry may fix (busy, warming, a 5xx without `x-should-retry: false`) is
 * tried again later, up to `maxAttempts`; any other reply is the line's result. While capacity is on
 * its way for the batch (a rental starting), a line no node could serve waits for it instead. A batch
 * ends when its last line does: its output and error files are written from the store's rows, each
 * `custom_id` once. Cancel and expiry end the lines not yet run with `batch_cancelled` / `batch_expired`.
 * After a crash, lines that were running are run again (counted as re-runs); a stop puts them back.
 * The log has a batch's start, its progress every `progressLogMs` and its end, never a line of each
 * request line (10,000 lines would drown the node's own events).
 * Must not know: HTTP, how a line reaches an engine, the OpenAI objects' shape.
 */

import type { Timers } from "@pair/cluster";
import { errorLine, outputLine, type BatchEndpoint } from "./batch-input.js";
import type { BatchStore, LineCounts, StoredBatch, StoredLine } from "./batch-store.js";

/** What running one line gave: the route's reply, as a client would have read it. */
export interface LineReply {
  readonly status: number;
  /** The reply body (JSON text for every route a batch may run). */
  readonly body: string;
  /** The workload's id in history. */
  readonly requestId: string;
  /** The node that served it (`x-pair-served-by`), when one did. */
  readonly servedBy?: string;
  /** `Retry-After`, in seconds, when the reply gave one. */
  readonly retryAfterS?: number;
  /** The reply said a retry will not help (`x-should-retry: false`). */
  readonly noRetry: boolean;
}

/** Runs one line's request through the node's routing, tagged with its batch. */
export type RunLine = (
  endpoint: BatchEndpoint,
  body: string,
  batchId: string,
  signal: AbortSignal,
) => Promise<LineReply>;

export interface BatchRunnerOptions {
  readonly store: BatchStore;
  readonly runLine: RunLine;
  /** Wall-clock milliseconds (batch times, back-offs, expiry). */
  readonly wallMs: () => number;
  /** The repeating timer behind the passes. */
  readonly timers: Pick<Timers, "every">;
  /** Lines in flight at once over all batches (default 8). */
  readonly maxConcurrentLines?: number;
  /** Runs of one line before a reply a retry could fix becomes its result (default 5). */
  readonly maxAttempts?: number;
  readonly log?: (line: string) => void;
  /** Between two progress lines of a batch in the log (default 60 s of wall time). */
  readonly progressLogMs?: number;
  /**
   * Whether capacity is on its way for the batch (its `--rent auto` rental is starting): a line no
   * node could serve meanwhile (no node for the model, a busy or warming one) waits for it, uncounted.
   */
  readonly waitsForCapacity?: (batchId: string) => boolean;
  /** A batch moved (a line ended, a status changed). */
  readonly onChange?: () => void;
  /** A batch ended (its files written): its lifecycle event, its rental's stop. */
  readonly onEnded?: (batch: StoredBatch, final: "completed" | Ending, counts: LineCounts) => void;
}

/** Lines in flight at once over all batches, unless the node is told otherwise. */
export const DEFAULT_BATCH_LINES = 8;

/** Between two progress lines of one batch in the log, unless the node is told otherwise. */
const PROGRESS_LOG_MS = 60_000;

/** Statuses a retry may fix, unless the reply says `x-should-retry: false`. */
const RETRYABLE_STATUS = new Set([408, 429, 500, 502, 503, 504]);
const MAX_BACKOFF_MS = 60_000;
/** Between runs of a line waiting for capacity on its way (a rental's pass is 5 s). */
const CAPACITY_WAIT_MS = 5_000;

export type Ending = "cancelled" | "expired";

interface Running {
  readonly batchId: string;
  readonly index: number;
  readonly controller: AbortController;
  readonly settled: Promise<void>;
}

export class BatchRunner {
  readonly #o: BatchRunnerOptions;
  readonly #max: number;
  readonly #maxAttempts: number;
  readonly #running = new Map<string, Running>();
  /** Batches whose lines are being ended (expiry), by how they end. */
  readonly #ending = new Map<string, Ending>();
  /** Batches in progress, in the order they take turns. */
  #turns: string[] = [];
  /** Batches in progress: when each last logged its progress, and the lines ended then. */
  readonly #progress = new Map<string, { atMs: number; ended: number }>();
  /** Lines in flight stopped to run again at once (`rerunWaiting`). */
  readonly #rerun = new Set<string>();
  #ticker: { cancel(): void } | undefined;
  #stopping = false;

  constructor(options: BatchRunnerOptions) {
    this.#o = options;
    this.#max = options.maxConcurrentLines ?? DEFAULT_BATCH_LINES;
    this.#maxAttempts = options.maxAttempts ?? 5;
    if (!Number.isInteger(this.#max) || this.#max < 1)
      throw new RangeError("maxConcurrentLines: must be an integer >= 1");
  }

  /** Takes up where the last process stopped: lines it was running run again; then every second, a look. */
  start(): void {
    const rerun = this.#o.store.requeueInterrupted();
    if (rerun > 0) this.#o.log?.(`batches: ${rerun} line(s) cut by the last stop run again`);
    for (const b of this.#o.store.unfinished()) {
      if (b.status === "in_progress") this.#add(b.id, "resumed");
      else this.#settle(b.id);
    }
    this.#ticker = this.#o.timers.every(() => this.#tick(), 1_000);
    this.#pump();
  }

  /** A batch was created (or changed): run it. */
  wake(batchId: string): void {
    const b = this.#o.store.batch(batchId);
    if (b?.status === "in_progress" && !this.#turns.includes(batchId)) this.#add(batchId, "started");
    this.#settle(batchId);
    this.#pump();
  }

  /** Lines of `batchId` in flight now. */
  inFlight(batchId?: string): number {
    let n = 0;
    for (const r of this.#running.values()) if (batchId === undefined || r.batchId === batchId) n++;
    return n;
  }

  /** Cancels a batch: lines not yet run end as `batch_cancelled`, lines in flight are stopped. */
  cancel(batchId: string): StoredBatch | undefined {
    const b = this.#o.store.batch(batchId);
    if (b === undefined) return undefined;
    if (b.status !== "in_progress" && b.status !== "validating") return b;
    this.#o.store.setStatus(batchId, "cancelling", this.#nowS());
    this.#o.log?.(`batch ${batchId}: cancelling`);
    this.#abortLines(batchId);
    this.#settle(batchId);
    this.#o.onChange?.();
    return this.#o.store.batch(batchId);
  }

  /**
   * What the batch's lines waited for is gone (its rental failed): lines waiting run again now, and
   * lines in flight (perhaps waiting on that node's start) are stopped and run again at once,
   * uncounted — on the nodes left, or to their error.
   */
  rerunWaiting(batchId: string): void {
    this.#o.store.dueNow(batchId);
    for (const [key, r] of this.#running)
      if (r.batchId === batchId) {
        this.#rerun.add(key);
        r.controller.abort();
      }
    this.#pump();
  }

  /** Stops taking lines; lines in flight are stopped and go back to wait for the next start. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#ticker?.cancel();
    const settled = [...this.#running.values()].map((r) => r.settled);
    for (const r of this.#running.values()) r.controller.abort();
    await Promise.all(settled);
  }

  #add(batchId: string, how: "started" | "resumed"): void {
    this.#turns.push(batchId);
    const c = this.#o.store.counts(batchId);
    const ended = c.completed + c.failed;
    this.#progress.set(batchId, { atMs: this.#o.wallMs(), ended });
    this.#o.log?.(`batch ${batchId}: ${how}, ${ended}/${c.total} line(s) done`);
  }

  /** One line a batch, every `progressLogMs`, when lines ended since the last one. */
  #logProgress(batchId: string): void {
    const last = this.#progress.get(batchId);
    const nowMs = this.#o.wallMs();
    if (last === undefined || nowMs - last.atMs < (this.#o.progressLogMs ?? PROGRESS_LOG_MS)) return;
    const c = this.#o.store.counts(batchId);
    const ended = c.completed + c.failed;
    if (ended === last.ended) return;
    const perMin = ((ended - last.ended) * 60_000) / (nowMs - last.atMs);
    this.#progress.set(batchId, { atMs: nowMs, ended });
    this.#o.log?.(
      `batch ${batchId}: ${ended}/${c.total} line(s) done (${c.failed} failed), ` +
        `${perMin.toFixed(1)}/min, ${c.running} running`,
    );
  }

  #tick(): void {
    const nowS = this.#nowS();
    for (const id of this.#turns) {
      this.#logProgress(id);
      const b = this.#o.store.batch(id);
      if (b !== undefined && b.status === "in_progress" && b.expiresAtS <= nowS && !this.#ending.has(id)) {
        this.#ending.set(id, "expired");
        this.#o.log?.(`batch ${id}: its completion window ended; lines not run end as batch_expired`);
        this.#abortLines(id);
        this.#settle(id);
      }
    }
    this.#pump();
  }

  /** Starts lines until the limit, taking one from each batch in progress in turn. */
  #pump(): void {
    if (this.#stopping) return;
    let idle = 0;
    while (this.#running.size < this.#max && this.#turns.length > 0 && idle < this.#turns.length) {
      const id = this.#turns.shift()!;
      const b = this.#o.store.batch(id);
      if (b === undefined || b.status !== "in_progress") continue;
      this.#turns.push(id);
      if (this.#ending.has(id)) {
        idle++;
        continue;
      }
      const [line] = this.#o.store.claim(id, 1, this.#o.wallMs());
      if (line === undefined) {
        idle++;
        continue;
      }
      idle = 0;
      this.#run(b, line);
    }
  }

  #run(batch: StoredBatch, line: StoredLine): void {
    const key = `${line.batchId}#${line.index}`;
    const controller = new AbortController();
    const settled = this.#o
      .runLine(batch.endpoint as BatchEndpoint, line.body, line.batchId, controller.signal)
      .then(
        (reply) => this.#ended(line, reply),
        () => this.#ended(line, undefined),
      )
      .finally(() => {
        this.#running.delete(key);
        this.#rerun.delete(key);
        this.#settle(line.batchId);
        this.#pump();
        this.#o.onChange?.();
      });
    this.#running.set(key, { batchId: line.batchId, index: line.index, controller, settled });
  }

  /** A line's run ended with `reply` (undefined: it threw, or was stopped). */
  #ended(line: StoredLine, reply: LineReply | undefined): void {
    const { store } = this.#o;
    if (this.#stopping) return store.retryLine(line.batchId, line.index, 0);
    if (this.#rerun.has(`${line.batchId}#${line.index}`))
      return store.retryLine(line.batchId, line.index, 0, { uncounted: true });
    const ok = reply !== undefined && reply.status >= 200 && reply.status < 300;
    if (ok) {
      const response = {
        status_code: reply.status,
        request_id: reply.requestId,
        body: parseBody(reply.body),
      };
      return store.finishLine(
        line.batchId,
        line.index,
        "completed",
        outputLine(line.customId, response),
        reply.servedBy,
      );
    }
    const ending = this.#endingOf(line.batchId);
    if (ending !== undefined)
      return store.finishLine(line.batchId, line.index, "failed", endedLine(line.customId, ending));
    const retryable = reply === undefined || (RETRYABLE_STATUS.has(reply.status) && !reply.noRetry);
    if ((retryable || reply?.status === 404) && this.#o.waitsForCapacity?.(line.batchId) === true)
      return store.retryLine(line.batchId, line.index, this.#o.wallMs() + CAPACITY_WAIT_MS, {
        uncounted: true,
      });
    if (retryable && line.attempts < this.#maxAttempts) {
      const backoffMs =
        reply?.retryAfterS !== undefined
          ? reply.retryAfterS * 1000
          : Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (line.attempts - 1));
      return store.retryLine(line.batchId, line.index, this.#o.wallMs() + backoffMs);
    }
    if (reply === undefined)
      return store.finishLine(
        line.batchId,
        line.index,
        "failed",
        errorLine(
          line.customId,
          null,
          "upstream_error",
          `the line failed ${line.attempts} time(s) inside the node`,
        ),
      );
    const body = parseBody(reply.body);
    const error = errorOf(body);
    const response = { status_code: reply.status, request_id: reply.requestId, body };
    store.finishLine(
      line.batchId,
      line.index,
      "failed",
      errorLine(line.customId, response, error.code, error.message),
    );
  }

  #endingOf(batchId: string): Ending | undefined {
    return this.#o.store.batch(batchId)?.status === "cancelling" ? "cancelled" : this.#ending.get(batchId);
  }

  #abortLines(batchId: string): void {
    for (const r of this.#running.values()) if (r.batchId === batchId) r.controller.abort();
  }

  /** Ends the batch when nothing of it runs or waits any more (or it is being ended). */
  #settle(batchId: string): void {
    if (this.#stopping || this.inFlight(batchId) > 0) return;
    const { store } = this.#o;
    const b = store.batch(batchId);
    if (b === undefined) return;
    if (b.status === "finalizing") return this.#finalize(b, "completed");
    if (b.status !== "in_progress" && b.status !== "cancelling") return;
    const ending = this.#endingOf(batchId);
    if (ending !== undefined) {
      store.failPending(batchId, (customId) => endedLine(customId, ending));
      return this.#finalize(b, ending);
    }
    const counts = store.counts(batchId);
    if (counts.pending + counts.running > 0) return;
    store.setStatus(batchId, "finalizing", this.#nowS());
    this.#finalize(b, "completed");
  }

  /** Writes the output and error files from the rows (idempotent: fixed ids), then the final status. */
  #finalize(b: StoredBatch, final: "completed" | Ending): void {
    const { store } = this.#o;
    const { output, errors } = store.results(b.id);
    const nowS = this.#nowS();
    const write = (suffix: string, lines: readonly string[]): string | null => {
      if (lines.length === 0) return null;
      const id = `file-${b.id}-${suffix}`;
      const text = lines.join("\n") + "\n";
      store.putFile(
        {
          id,
          purpose: "batch_output",
          filename: `${b.id}_${suffix}.jsonl`,
          bytes: Buffer.byteLength(text),
          createdAtS: nowS,
        },
        text,
      );
      return id;
    };
    const files = { output: write("output", output), error: write("errors", errors) };
    store.setStatus(b.id, final, nowS, files);
    this.#turns = this.#turns.filter((id) => id !== b.id);
    this.#ending.delete(b.id);
    this.#progress.delete(b.id);
    this.#o.log?.(
      `batch ${b.id}: ${final}, ${output.length} line(s) answered, ${errors.length} in the error file`,
    );
    this.#o.onEnded?.(b, final, store.counts(b.id));
    this.#o.onChange?.();
  }

  #nowS(): number {
    return Math.floor(this.#o.wallMs() / 1000);
  }
}

function endedLine(customId: string, ending: Ending): string {
  return ending === "cancelled"
    ? errorLine(customId, null, "batch_cancelled", "the batch was cancelled before this request ran")
    : errorLine(
        customId,
        null,
        "batch_expired",
        "the batch's completion window ended before this request ran",
      );
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The code and message of an error reply, in either dialect's shape. */
function errorOf(body: unknown): { code: string; message: string } {
  const e = (body as { error?: unknown } | null)?.error;
  if (typeof e === "object" && e !== null) {
    const o = e as Record<string, unknown>;
    return {
      code: typeof o["code"] === "string" ? o["code"] : "upstream_error",
      message: typeof o["message"] === "string" ? o["message"] : "the request failed",
    };
  }
  return { code: "upstream_error", message: typeof e === "string" ? e : "the request failed" };
}
