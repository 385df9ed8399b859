/**
 * `--rent auto`: a batch rents a Hugging Face Jobs GPU only while the cluster alone would miss its
 * deadline. Each pass re-plans the lines still to run (planBatch, with the rates history measured):
 * missing the deadline, it rents the cheapest GPU that finishes in time within what is left of the
 * budget (planRental), for a window = the time left to the deadline; once that node serves, its
 * measured rate replaces the assumed one. It stops the rental the moment the batch no longer needs
 * it — the batch ended (finished, cancelled, expired), the deadline passed, the next started minute
 * would pass the budget, or the cluster alone now finishes in time with a start-up to spare — and calls it stopped only on
 * the provider's evidence. One rental per batch: once stopped, the rest runs on the cluster. A
 * model no node of the cluster serves gets nothing from it (so only the batch's end, the deadline or
 * the budget stops its rental), and while a rental starts its lines wait for it (`starting`). A rented
 * node whose job fails (ERROR) is stopped for good at the next pass, the failure in the batch's
 * events, and the lines that waited for it run again at once on what is left (`onCapacityGone`).
 * Must not know: how a GPU is rented, stopped or priced (RentalHooks: the hosting contract), HTTP.
 */

import type { Timers } from "@pair/cluster";
import type { InputLine } from "./batch-input.js";
import {
  planBatch,
  planRental,
  ratesOf,
  RENTAL_STARTUP_S,
  type BatchPlan,
  type HistoryRow,
  type RentableGpu,
} from "./batch-plan.js";
import type { BatchStore } from "./batch-store.js";
import type { StoredRental } from "./rental-store.js";

/** What the rented node says now. */
export interface RentedNodeState {
  /** Routed to: its model is served. */
  readonly serving: boolean;
  /** Billed so far (the ledger's total for the node). */
  readonly spentUsd: number;
  /** The ledger's price (the GPU and the exposed port), when known. */
  readonly usdPerHour: number | null;
  /** Stops not yet confirmed by the provider's evidence. */
  readonly openObligations: number;
  /** The provider's message when its job failed (a Job in ERROR): it will never serve. */
  readonly failed?: string;
}

export type HookAnswer = { readonly ok: true } | { readonly ok: false; readonly message: string };

/** The hosting contract, as a batch reaches it (rented/ through its index, in stages/serve.ts). */
export interface RentalHooks {
  hardware(credential: string | null): Promise<readonly RentableGpu[]>;
  /** Create a Jobs node: reserved in the ledger before it starts, `windowMin` its hard timeout. */
  rent(spec: {
    readonly name: string;
    readonly model: string;
    readonly flavor: string;
    readonly windowMin: number;
    readonly budgetUsd: number | null;
    readonly credential: string | null;
  }): Promise<HookAnswer>;
  node(name: string): RentedNodeState | undefined;
  /** Stop it for good (a cancel through the contract; the evidence comes later, in `node`). */
  stop(name: string): Promise<HookAnswer>;
  history(): readonly HistoryRow[];
  /** Whether a node of the cluster other than `without` (the rental's own) serves `model` now. */
  serves(model: string, without: string | undefined): boolean;
}

/** A batch's lifecycle event, in the same history as the rented nodes' states. */
export type RecordEvent = (batchId: string, event: string, reason: string, atMs: number) => void;

export interface BatchRentalOptions {
  readonly store: BatchStore;
  readonly hooks: RentalHooks;
  readonly wallMs: () => number;
  /** The repeating timer behind the passes. */
  readonly timers: Pick<Timers, "every">;
  readonly record: RecordEvent;
  /** Lines one node runs at once (the runner's limit). */
  readonly linesAtOnce: number;
  /** Between passes (default 5 s). */
  readonly passMs?: number;
  readonly log?: (line: string) => void;
  /** The rented node failed before the batch was done: lines waiting for it must not wait any more. */
  readonly onCapacityGone?: (batchId: string) => void;
}

/** Longest Jobs window (HF's `timeoutSeconds` limit), in minutes. */
const MAX_WINDOW_MIN = 24 * 60;

/** A rented node's name for a batch: `batch_<hex>` → `batch-<12 hex>`. */
export function rentalNodeName(batchId: string): string {
  return `batch-${batchId
    .replace(/^batch_/, "")
    .slice(0, 12)
    .toLowerCase()}`;
}

export class BatchRental {
  readonly #o: BatchRentalOptions;
  #ticker: { cancel(): void } | undefined;
  #pass: Promise<void> | undefined;
  #again: Promise<void> | undefined;

  constructor(options: BatchRentalOptions) {
    this.#o = options;
  }

  start(): void {
    this.#ticker = this.#o.timers.every(() => void this.pass(), this.#o.passMs ?? 5_000);
  }

  /** No more passes; a pass under way ends first. */
  async stop(): Promise<void> {
    this.#ticker?.cancel();
    await this.#pass;
  }

  /**
   * Whether a rental is on its way for the batch: not planned yet, or rented and not serving yet.
   * Its lines that no node can serve meanwhile wait for it rather than fail (the runner asks).
   */
  starting(batchId: string): boolean {
    const r = this.#o.store.rentals.get(batchId);
    return r !== undefined && (r.state === "renting" || (r.state === "watching" && r.note === null));
  }

  /** One look at every active rental; asked during a look, another follows it (a batch just ended). */
  pass(): Promise<void> {
    if (this.#pass !== undefined) {
      this.#again ??= this.#pass.then(() => {
        this.#again = undefined;
        return this.pass();
      });
      return this.#again;
    }
    this.#pass = this.#all().finally(() => (this.#pass = undefined));
    return this.#pass;
  }

  async #all(): Promise<void> {
    for (const r of this.#o.store.rentals.active()) {
      try {
        await this.#look(r);
      } catch (cause) {
        this.#o.log?.(`batch ${r.batchId}: rental pass: ${String(cause)}`);
      }
    }
  }

  async #look(r: StoredRental): Promise<void> {
    const nowMs = this.#o.wallMs();
    if (r.state === "watching") return this.#watch(r, nowMs);
    const node = r.node === null ? undefined : this.#o.hooks.node(r.node);
    if (r.state === "stopping") return this.#confirm(r, node, nowMs);
    const spentUsd = node?.spentUsd ?? r.spentUsd;
    const usdPerHour = node?.usdPerHour ?? r.usdPerHour;
    const measured = this.#measured(r);
    r = this.#o.store.rentals.update(r.batchId, { spentUsd, usdPerHour, measuredTokensPerS: measured })!;
    // A job that ended in ERROR at its window's end is the deadline's stop, not a failure.
    if (node?.failed !== undefined && this.#ended(r, nowMs) === undefined)
      return this.#failed(r, node.failed, nowMs);
    if (r.state === "renting" && node?.serving === true) {
      r = this.#o.store.rentals.update(r.batchId, { state: "serving", servingAtS: secondsOf(nowMs) })!;
      this.#event(r, "rental serving", `rented node ${r.node} serves ${r.model}`, nowMs);
    }
    const why = this.#ended(r, nowMs) ?? this.#overBudget(r) ?? this.#clusterSuffices(r, nowMs);
    if (why === undefined) return;
    const stopped = await this.#o.hooks.stop(r.node!);
    if (!stopped.ok) {
      this.#o.log?.(`batch ${r.batchId}: stopping rented node ${r.node} (${why}): ${stopped.message}`);
      return;
    }
    this.#o.store.rentals.update(r.batchId, { state: "stopping", stopReason: why });
    this.#event(r, "rental stopped", `rented node ${r.node} stopped: ${why}`, nowMs);
  }

  /** Nothing rented yet: rent when the cluster alone misses the deadline. */
  async #watch(r: StoredRental, nowMs: number): Promise<void> {
    const ended = this.#ended(r, nowMs);
    if (ended !== undefined) {
      this.#o.store.rentals.update(r.batchId, { state: "stopped", stopReason: `nothing rented: ${ended}` });
      return;
    }
    const plan = this.#plan(r, nowMs, undefined);
    if (plan === undefined || plan.meetsDeadline) {
      const note = "the cluster alone finishes in time: nothing rented";
      if (r.note !== note) {
        this.#o.store.rentals.update(r.batchId, { note });
        this.#event(r, "plan", `${note} (about ${plan?.seconds ?? 0} s of work)`, nowMs);
      }
      return;
    }
    const leftUsd = r.budgetUsd === null ? undefined : r.budgetUsd - r.spentUsd;
    const gpus = await this.#o.hooks.hardware(r.credential);
    const rent = planRental(plan, gpus, leftUsd);
    const chosen = rent.options.find((o) => o.flavor === rent.recommended);
    if (chosen === undefined) {
      const note =
        `${clusterWords(plan, r.model)}, past the deadline, and no Jobs GPU finishes in ` +
        `time${leftUsd === undefined ? "" : ` within $${leftUsd.toFixed(2)}`}: the lines not run by then expire`;
      this.#o.store.rentals.update(r.batchId, { state: "unavailable", note });
      this.#event(r, "rent refused", note, nowMs);
      return;
    }
    const name = rentalNodeName(r.batchId);
    const windowMin = Math.max(
      1,
      Math.min(MAX_WINDOW_MIN, Math.floor((r.deadlineAtS * 1000 - nowMs) / 60_000)),
    );
    const answer = await this.#o.hooks.rent({
      name,
      model: r.model,
      flavor: chosen.flavor,
      windowMin,
      budgetUsd: r.budgetUsd,
      credential: r.credential,
    });
    if (!answer.ok) {
      this.#o.store.rentals.update(r.batchId, { state: "unavailable", note: answer.message });
      this.#event(r, "rent refused", answer.message, nowMs);
      return;
    }
    this.#o.store.rentals.update(r.batchId, {
      state: "renting",
      node: name,
      flavor: chosen.flavor,
      gpu: chosen.gpu,
      usdPerHour: chosen.usdPerHour,
      rentedAtS: secondsOf(nowMs),
      note: null,
    });
    const cap = r.budgetUsd === null ? "" : `, at most $${r.budgetUsd.toFixed(2)}`;
    this.#event(
      r,
      "rent",
      `rented ${chosen.flavor} (${chosen.gpu}, $${chosen.usdPerHour.toFixed(2)}/h) as node ${name} for ` +
        `${windowMin} min: ${clusterWords(plan, r.model)}, with it about ${chosen.seconds} s` +
        ` for about $${chosen.costUsd.toFixed(2)}${cap}`,
      nowMs,
    );
  }

  /** Its job failed: stopped for good (no request may start another), its lines wait no more. */
  async #failed(r: StoredRental, message: string, nowMs: number): Promise<void> {
    const why = `the rented job failed: ${message}`;
    const stopped = await this.#o.hooks.stop(r.node!);
    if (!stopped.ok) {
      this.#o.log?.(`batch ${r.batchId}: stopping rented node ${r.node} (${why}): ${stopped.message}`);
      return;
    }
    this.#o.store.rentals.update(r.batchId, { state: "stopping", stopReason: why });
    this.#event(r, "rental failed", `rented node ${r.node}: ${why}`, nowMs);
    this.#o.onCapacityGone?.(r.batchId);
  }

  /** A stop was sent: stopped once the provider's evidence closed the obligation. */
  #confirm(r: StoredRental, node: RentedNodeState | undefined, nowMs: number): void {
    if (node !== undefined && (node.openObligations > 0 || node.serving)) return;
    const spentUsd = node?.spentUsd ?? r.spentUsd;
    this.#o.store.rentals.update(r.batchId, { state: "stopped", stoppedAtS: secondsOf(nowMs), spentUsd });
    this.#event(r, "rental stop confirmed", `rented node ${r.node} billed $${spentUsd.toFixed(4)}`, nowMs);
  }

  #ended(r: StoredRental, nowMs: number): string | undefined {
    const status = this.#o.store.batch(r.batchId)?.status;
    if (status === "completed" || status === "finalizing") return "the batch finished";
    if (status === "cancelled" || status === "cancelling") return "the batch was cancelled";
    if (status === "expired") return "the batch expired";
    if (status === "failed" || status === undefined) return "the batch failed";
    if (nowMs >= r.deadlineAtS * 1000) return "the deadline passed";
    return undefined;
  }

  /** The next started minute would bill past the budget. */
  #overBudget(r: StoredRental): string | undefined {
    if (r.budgetUsd === null) return undefined;
    const minuteUsd = (r.usdPerHour ?? 0) / 60;
    return r.spentUsd + minuteUsd > r.budgetUsd
      ? `the budget of $${r.budgetUsd.toFixed(2)} is reached ($${r.spentUsd.toFixed(4)} spent)`
      : undefined;
  }

  /** With a start-up's time to spare: a stop the estimate got wrong leaves time to see it. */
  #clusterSuffices(r: StoredRental, nowMs: number): string | undefined {
    const plan = this.#plan(r, nowMs, r.node ?? undefined, RENTAL_STARTUP_S);
    return plan?.meetsDeadline === true
      ? `the cluster alone now finishes in time (about ${plan.seconds} s left of work)`
      : undefined;
  }

  /**
   * The lines still to run, planned over the cluster's measured rates: without `without` (the
   * rental's own node) nor any node a batch rented (a stopped one's rate is no cluster's).
   */
  #plan(r: StoredRental, nowMs: number, without: string | undefined, spareS = 0) {
    const lines: InputLine[] = this.#o.store
      .unfinishedBodies(r.batchId)
      .map((body, i) => ({ customId: String(i), body, model: r.model }));
    if (lines.length === 0) return undefined;
    const rented = this.#o.store.rentals.nodes();
    const history = this.#o.hooks
      .history()
      .filter((h) => h.serving_node !== without && !rented.has(h.serving_node ?? ""));
    // A model no node of the cluster serves (no local engine for it) gets nothing from the cluster.
    const unserved = this.#o.hooks.serves(r.model, without) ? undefined : new Set([r.model]);
    return planBatch(lines, history, {
      deadlineS: Math.max(0, r.deadlineAtS - nowMs / 1000 - spareS),
      linesAtOnce: this.#o.linesAtOnce,
      ...(unserved === undefined ? {} : { unserved }),
    });
  }

  /** The rented node's rate for the model, once it served lines (per request × lines at once). */
  #measured(r: StoredRental): number | null {
    if (r.node === null) return r.measuredTokensPerS;
    const rate = ratesOf(this.#o.hooks.history(), r.model)[r.node];
    return rate === undefined ? r.measuredTokensPerS : rate * this.#o.linesAtOnce;
  }

  #event(r: StoredRental, event: string, reason: string, nowMs: number): void {
    this.#o.record(r.batchId, event, reason, nowMs);
    this.#o.log?.(`batch ${r.batchId}: ${event}: ${reason}`);
  }
}

/** What the cluster alone would take, in a rent event's words. */
function clusterWords(plan: BatchPlan, model: string): string {
  return Number.isFinite(plan.seconds)
    ? `the cluster alone needs about ${plan.seconds} s`
    : `no node of the cluster serves ${model}`;
}

function secondsOf(ms: number): number {
  return Math.floor(ms / 1000);
}
