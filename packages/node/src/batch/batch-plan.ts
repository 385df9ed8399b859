/**
 * `pair batch plan`: whether the cluster alone finishes a batch file by a deadline. Per model: the
 * lines, their estimated input tokens (characters / 4) and output tokens (`max_tokens` or
 * `max_completion_tokens`, else DEFAULT_OUTPUT_TOKENS), and the rate the cluster gives batch work
 * — each node's output tokens per second per request, measured from its completed workloads in
 * history (else ASSUMED_TOKENS_PER_S, said so), times the lines the node runs at once for a batch.
 * Must not know: HTTP, where history or the file came from.
 */

import type { InputLine } from "./batch-input.js";

/** Output tokens assumed for a line that sets no limit. */
export const DEFAULT_OUTPUT_TOKENS = 256;
/** Output tokens per second per request assumed for a model nothing in history measured. */
export const ASSUMED_TOKENS_PER_S = 20;

/** What plan needs of a finished workload (`pair history --json`). */
export interface HistoryRow {
  readonly model: string;
  readonly serving_node: string | null;
  readonly status: string;
  readonly tokens_out: number | null;
  readonly duration_ms: number | null;
}

export interface ModelPlan {
  readonly model: string;
  readonly lines: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Output tokens per second per request, by serving node (measured). */
  readonly measured: Readonly<Record<string, number>>;
  /** No completed workload of this model in history: the rate is ASSUMED_TOKENS_PER_S. */
  readonly assumed: boolean;
  /** No node of the cluster serves the model now: it gives the batch nothing (seconds: Infinity). */
  readonly unserved: boolean;
  /** Output tokens per second the batch gets for this model. */
  readonly tokensPerS: number;
  readonly seconds: number;
}

export interface BatchPlan {
  readonly models: readonly ModelPlan[];
  /** Models one after another: lines of different models share the same runner. */
  readonly seconds: number;
  readonly deadlineS: number;
  readonly meetsDeadline: boolean;
}

export function planBatch(
  lines: readonly InputLine[],
  history: readonly HistoryRow[],
  options: {
    readonly deadlineS: number;
    readonly linesAtOnce: number;
    /** Models no node of the cluster serves now (a rental's own node left out). */
    readonly unserved?: ReadonlySet<string>;
  },
): BatchPlan {
  const byModel = new Map<string, InputLine[]>();
  for (const l of lines) {
    if (l.result !== undefined) continue;
    // Pushed, not spread: a rental re-plans 10,000 lines every pass.
    const same = byModel.get(l.model);
    if (same === undefined) byModel.set(l.model, [l]);
    else same.push(l);
  }
  const models = [...byModel].map(([model, ls]): ModelPlan => {
    const unserved = options.unserved?.has(model) === true;
    const measured = unserved ? {} : ratesOf(history, model);
    const nodes = Object.values(measured);
    const assumed = !unserved && nodes.length === 0;
    // Each node's rate per request, shared by the lines at once; never more lines than there are.
    const perRequest = assumed ? ASSUMED_TOKENS_PER_S : nodes.reduce((a, b) => a + b, 0) / nodes.length;
    const atOnce = Math.min(options.linesAtOnce, ls.length);
    const tokensPerS = unserved ? 0 : perRequest * atOnce;
    const outputTokens = ls.reduce((sum, l) => sum + outputTokensOf(l.body), 0);
    return {
      model,
      lines: ls.length,
      inputTokens: ls.reduce((sum, l) => sum + Math.ceil(l.body.length / 4), 0),
      outputTokens,
      measured,
      assumed,
      unserved,
      tokensPerS,
      seconds: Math.ceil(outputTokens / tokensPerS),
    };
  });
  const seconds = models.reduce((sum, m) => sum + m.seconds, 0);
  return { models, seconds, deadlineS: options.deadlineS, meetsDeadline: seconds <= options.deadlineS };
}

/** Output tokens per second per request of each node that served `model`, from completed workloads. */
export function ratesOf(history: readonly HistoryRow[], model: string): Record<string, number> {
  const sums = new Map<string, { tokens: number; ms: number }>();
  for (const w of history) {
    if (w.model !== model || w.status !== "completed" || w.serving_node === null) continue;
    if (w.tokens_out === null || w.tokens_out <= 0 || w.duration_ms === null || w.duration_ms <= 0) continue;
    const s = sums.get(w.serving_node) ?? { tokens: 0, ms: 0 };
    s.tokens += w.tokens_out;
    s.ms += w.duration_ms;
    sums.set(w.serving_node, s);
  }
  return Object.fromEntries([...sums].map(([node, s]) => [node, (s.tokens * 1000) / s.ms]));
}

function outputTokensOf(body: string): number {
  const o = JSON.parse(body) as Record<string, unknown>;
  const limit = o["max_completion_tokens"] ?? o["max_tokens"] ?? o["num_predict"];
  return typeof limit === "number" && limit > 0 ? limit : DEFAULT_OUTPUT_TOKENS;
}

/**
 * Output tokens per second one rented GPU gives a batch of a small (≤ 8B) model under vLLM's
 * continuous batching, assumed until PAIR has measured it: round figures, said so in the plan. A
 * flavor with several GPUs counts as one (one vLLM on a small model gains little from more).
 */
export const ASSUMED_GPU_TOKENS_PER_S: Readonly<Record<string, number>> = {
  T4: 250,
  L4: 500,
  A10G: 600,
  L40S: 1_200,
  A100: 1_800,
  H100: 3_000,
  H200: 3_500,
};
/** A GPU this table does not know is assumed to be as slow as the slowest it does. */
const SLOWEST_GPU_TOKENS_PER_S = 250;
/** Seconds a rented GPU bills before it serves (the Job starting, the model loading): assumed. */
export const RENTAL_STARTUP_S = 600;

/** A GPU a batch window may rent (`GET /pair/v1/rented/job-hardware`). */
export interface RentableGpu {
  readonly flavor: string;
  readonly gpu: string;
  readonly gpus: number;
  readonly usd_per_hour: number;
}

export interface RentalOption {
  readonly flavor: string;
  readonly gpu: string;
  readonly usdPerHour: number;
  /** Measured on a rented node of this GPU that served the model, else assumed (ASSUMED_GPU_TOKENS_PER_S). */
  readonly tokensPerS: number;
  readonly measured: boolean;
  /** With the cluster, from the submit. */
  readonly seconds: number;
  /** Billed from the rental's start until the batch is done, per started minute. */
  readonly costUsd: number;
  readonly meetsDeadline: boolean;
  readonly withinBudget: boolean;
}

export interface RentalPlan {
  readonly options: readonly RentalOption[];
  /** The cheapest option that meets the deadline within the budget, if any. */
  readonly recommended: string | null;
}

/**
 * What each GPU would add: the cluster keeps its rate, the GPU adds its own after RENTAL_STARTUP_S
 * (billed from the start), both until the file's output tokens are done. Cheapest first. `measured`:
 * output tokens per second a rented GPU (by name, e.g. L4) gave the model, used instead of the assumption.
 */
export function planRental(
  plan: BatchPlan,
  gpus: readonly RentableGpu[],
  budgetUsd: number | undefined,
  measured: Readonly<Record<string, number>> = {},
): RentalPlan {
  const tokens = plan.models.reduce((sum, m) => sum + m.outputTokens, 0);
  const clusterRate = plan.seconds > 0 ? tokens / plan.seconds : 0;
  const options = gpus
    .map((g): RentalOption => {
      const seen = measured[g.gpu];
      const rate = seen ?? ASSUMED_GPU_TOKENS_PER_S[g.gpu] ?? SLOWEST_GPU_TOKENS_PER_S;
      const alone = clusterRate > 0 ? tokens / clusterRate : Infinity;
      const together = (tokens + rate * RENTAL_STARTUP_S) / (clusterRate + rate);
      const seconds = Math.ceil(alone <= RENTAL_STARTUP_S ? alone : together);
      // Per started minute, rounded up to the cent (the epsilon keeps 80.000…01 cents at 80).
      const costUsd = Math.ceil((Math.ceil(seconds / 60) * g.usd_per_hour * 100) / 60 - 1e-9) / 100;
      return {
        flavor: g.flavor,
        gpu: g.gpus > 1 ? `${g.gpu} ×${g.gpus}` : g.gpu,
        usdPerHour: g.usd_per_hour,
        tokensPerS: rate,
        measured: seen !== undefined,
        seconds,
        costUsd,
        meetsDeadline: seconds <= plan.deadlineS,
        withinBudget: budgetUsd === undefined || costUsd <= budgetUsd,
      };
    })
    .sort((a, b) => a.costUsd - b.costUsd || a.seconds - b.seconds);
  const best = options.find((o) => o.meetsDeadline && o.withinBudget);
  return { options, recommended: best?.flavor ?? null };
}
