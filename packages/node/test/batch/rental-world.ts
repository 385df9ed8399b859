/**
 * A batch's world in virtual time, for `--rent auto`: the real BatchStore, BatchRunner and
 * BatchRental on one virtual clock (their interval seams fire as it moves), a cluster of two nodes
 * whose lines take a set virtual time each (written to a history as a node's workloads are), and a
 * Jobs GPU that bills per started minute from its create, serves after its start-up time, and
 * confirms a stop by evidence a little later — as the Hugging Face Jobs emulator does. Without
 * `clusterServes`, no cluster node has the model: a line nothing serves is answered 404.
 * Must not know: what a test asserts.
 */

import { VirtualRuntime } from "@pair/cluster";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  BatchRental,
  BatchRunner,
  BatchStore,
  readBatchInput,
  type HistoryRow,
  type LineReply,
  type RentableGpu,
  type RentalHooks,
  type StoredBatch,
} from "../../src/batch/index.js";

export const MODEL = "Qwen/Qwen3-0.6B";
export const GPUS: RentableGpu[] = [
  { flavor: "t4-small", gpu: "T4", gpus: 1, usd_per_hour: 0.4 },
  { flavor: "l4x1", gpu: "L4", gpus: 1, usd_per_hour: 0.8 },
  { flavor: "a100-large", gpu: "A100", gpus: 1, usd_per_hour: 2.5 },
];
/** The exposed port's surcharge the ledger adds to a Job's price. */
const PORT_USD_PER_HOUR = 0.01;

export interface WorldOptions {
  /** Virtual ms a line takes on each cluster node. */
  readonly clusterLineMs: number;
  /** Virtual ms a line takes on the rented GPU. */
  readonly rentedLineMs: number;
  readonly startupMs?: number;
  readonly evidenceMs?: number;
  readonly linesAtOnce?: number;
  /** The cluster's nodes serve the model (default); false: no local engine for it, lines get 404. */
  readonly clusterServes?: boolean;
}

export interface Rented {
  readonly name: string;
  readonly flavor: string;
  readonly windowMin: number;
  readonly budgetUsd: number | null;
  readonly usdPerHour: number;
  readonly rentedAtMs: number;
  stoppedAtMs?: number;
  /** Its job failed then (as a Job goes to ERROR): it never serves, and bills no more. */
  failedAtMs?: number;
  lines: number;
}

export class RentalWorld {
  readonly runtime = new VirtualRuntime({ wallMs: 0, monoMs: 0 });
  readonly dir = mkdtempSync(join(tmpdir(), "pair-rental-"));
  readonly store = new BatchStore(this.dir);
  readonly history: HistoryRow[] = [];
  readonly events: { batchId: string; event: string; reason: string; atMs: number }[] = [];
  readonly rented: Rented[] = [];
  readonly served = new Map<string, number>();
  /** What the runner and the rental logged. */
  readonly log: string[] = [];
  /** Lines answered 404: no node served the model then. */
  refused = 0;
  readonly runner: BatchRunner;
  readonly rental: BatchRental;
  readonly #o: Required<WorldOptions>;
  #inFlight = new Map<string, number>();
  #seq = 0;

  constructor(options: WorldOptions) {
    this.#o = { startupMs: 600_000, evidenceMs: 20_000, linesAtOnce: 8, clusterServes: true, ...options };
    const { timers } = this.runtime;
    this.rental = new BatchRental({
      store: this.store,
      hooks: this.#hooks(),
      wallMs: () => this.nowMs,
      timers,
      record: (batchId, event, reason, atMs) => void this.events.push({ batchId, event, reason, atMs }),
      linesAtOnce: this.#o.linesAtOnce,
      passMs: 5_000,
      log: (line) => void this.log.push(line),
      onCapacityGone: (id) => this.runner.rerunWaiting(id),
    });
    this.runner = new BatchRunner({
      store: this.store,
      runLine: (_endpoint, body, _batchId, signal) => this.#runLine(body, signal),
      waitsForCapacity: (id) => this.rental.starting(id),
      wallMs: () => this.nowMs,
      timers,
      maxConcurrentLines: this.#o.linesAtOnce,
      log: (line) => void this.log.push(line),
      onEnded: (b, final) => {
        this.events.push({ batchId: b.id, event: final, reason: "", atMs: this.nowMs });
        void this.rental.pass();
      },
    });
    this.runner.start();
    this.rental.start();
  }

  /** Submits `lines` lines of `maxTokens` each, as POST /v1/batches does (rent: its metadata's options). */
  async submit(
    lines: number,
    maxTokens: number,
    rent?: { deadlineS: number; budgetUsd?: number },
  ): Promise<string> {
    const text = Array.from({ length: lines }, (_, i) =>
      JSON.stringify({
        custom_id: `l${i}`,
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: MODEL, max_tokens: maxTokens, messages: [{ role: "user", content: `q${i}` }] },
      }),
    ).join("\n");
    const input = readBatchInput(text, "/v1/chat/completions");
    if (!input.ok) throw new Error("bad input");
    const id = `batch_${String(++this.#seq).padStart(24, "0")}`;
    const nowS = Math.floor(this.nowMs / 1000);
    const batch: StoredBatch = {
      id,
      endpoint: "/v1/chat/completions",
      inputFileId: "file-x",
      completionWindow: "24h",
      status: "in_progress",
      requester: "local",
      metadata: null,
      errors: [],
      outputFileId: null,
      errorFileId: null,
      createdAtS: nowS,
      expiresAtS: nowS + (rent?.deadlineS ?? 86_400),
      inProgressAtS: nowS,
      finalizingAtS: null,
      completedAtS: null,
      failedAtS: null,
      expiredAtS: null,
      cancellingAtS: null,
      cancelledAtS: null,
    };
    this.store.addBatch(batch, input.lines);
    if (rent !== undefined)
      this.store.rentals.add({
        batchId: id,
        model: MODEL,
        credential: null,
        deadlineAtS: nowS + rent.deadlineS,
        budgetUsd: rent.budgetUsd ?? null,
      });
    this.runner.wake(id);
    await this.rental.pass();
    return id;
  }

  /** The virtual wall time now (ms). */
  get nowMs(): number {
    return this.runtime.wallMs;
  }

  /** Moves virtual time by `ms`, a second at a time, letting each step's work settle. */
  async advance(ms: number, until?: () => boolean): Promise<void> {
    const end = this.nowMs + ms;
    while (this.nowMs < end && until?.() !== true) {
      this.runtime.advance(1_000);
      for (let k = 0; k < 5; k++) await new Promise((r) => setImmediate(r));
    }
  }

  /** The rented GPU's minutes billed so far (per started minute from its create, to its stop). */
  billedMinutes(r: Rented): number {
    return Math.ceil(((r.failedAtMs ?? r.stoppedAtMs ?? this.nowMs) - r.rentedAtMs) / 60_000);
  }

  /** The rented GPU's job fails now (a Job's ERROR): lines on it are cut, it never serves. */
  failRented(): Rented {
    const r = this.rented.at(-1)!;
    r.failedAtMs = this.nowMs;
    return r;
  }

  async close(): Promise<void> {
    await this.rental.stop();
    await this.runner.stop();
    this.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }

  #serving(r: Rented | undefined): r is Rented {
    return (
      r !== undefined &&
      r.stoppedAtMs === undefined &&
      r.failedAtMs === undefined &&
      this.nowMs >= r.rentedAtMs + this.#o.startupMs
    );
  }

  /** A line goes to the rented GPU while it serves (`prefer`), else to the cluster node with fewer lines. */
  #runLine(body: string, signal: AbortSignal): Promise<LineReply> {
    const gpu = this.rented.at(-1);
    if (!this.#serving(gpu) && !this.#o.clusterServes) {
      this.refused += 1;
      const error = { error: { code: "model_not_found", message: `no node serves the model "${MODEL}"` } };
      return Promise.resolve({
        status: 404,
        body: JSON.stringify(error),
        requestId: "req-404",
        noRetry: false,
      });
    }
    const node = this.#serving(gpu)
      ? gpu.name
      : (this.#inFlight.get("a") ?? 0) <= (this.#inFlight.get("b") ?? 0)
        ? "a"
        : "b";
    const ms = node === gpu?.name ? this.#o.rentedLineMs : this.#o.clusterLineMs;
    const tokens = (JSON.parse(body) as { max_tokens: number }).max_tokens;
    this.#inFlight.set(node, (this.#inFlight.get(node) ?? 0) + 1);
    const requestId = `req-${++this.#seq}`;
    return new Promise((resolve) => {
      let done = false;
      const settle = (reply: LineReply) => {
        done = true;
        timer.cancel();
        this.#inFlight.set(node, (this.#inFlight.get(node) ?? 1) - 1);
        resolve(reply);
      };
      const timer = this.runtime.timers.after(() => {
        // A line on a GPU stopped meanwhile is cut: a 502 the runner retries on the cluster.
        if (node === gpu?.name && (gpu.stoppedAtMs ?? gpu.failedAtMs) !== undefined)
          return settle({ status: 502, body: "{}", requestId, noRetry: false });
        this.served.set(node, (this.served.get(node) ?? 0) + 1);
        this.history.push({
          model: MODEL,
          serving_node: node,
          status: "completed",
          tokens_out: tokens,
          duration_ms: ms,
        });
        settle({
          status: 200,
          body: JSON.stringify({ choices: [{ message: { content: "ok" } }] }),
          requestId,
          noRetry: false,
        });
      }, ms);
      signal.addEventListener("abort", () => {
        if (!done) settle({ status: 499, body: "{}", requestId, noRetry: true });
      });
    });
  }

  #hooks(): RentalHooks {
    return {
      hardware: () => Promise.resolve(GPUS),
      rent: (spec) => {
        const gpu = GPUS.find((g) => g.flavor === spec.flavor)!;
        this.rented.push({
          name: spec.name,
          flavor: spec.flavor,
          windowMin: spec.windowMin,
          budgetUsd: spec.budgetUsd,
          usdPerHour: gpu.usd_per_hour + PORT_USD_PER_HOUR,
          rentedAtMs: this.nowMs,
          lines: 0,
        });
        return Promise.resolve({ ok: true });
      },
      node: (name) => {
        const r = this.rented.find((x) => x.name === name);
        if (r === undefined) return undefined;
        // ERROR is the evidence that closes the obligation, as a stop's CANCELED is.
        const open =
          r.failedAtMs === undefined &&
          (r.stoppedAtMs === undefined || this.nowMs < r.stoppedAtMs + this.#o.evidenceMs);
        return {
          serving: this.#serving(r),
          spentUsd: (this.billedMinutes(r) * r.usdPerHour) / 60,
          usdPerHour: r.usdPerHour,
          openObligations: open ? 1 : 0,
          ...(r.failedAtMs === undefined ? {} : { failed: "the job errored" }),
        };
      },
      stop: (name) => {
        const r = this.rented.find((x) => x.name === name);
        if (r !== undefined) r.stoppedAtMs ??= this.nowMs;
        return Promise.resolve({ ok: true });
      },
      history: () => this.history,
      serves: () => this.#o.clusterServes,
    };
  }
}
