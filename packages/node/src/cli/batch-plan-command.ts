/**
 * `pair batch plan FILE`: whether the cluster alone finishes a batch file by the deadline (from
 * history's measured rates, or a stated assumption), and when it does not, which Hugging Face Jobs
 * GPU would finish it in time, when, at what cost, within `--budget-usd` (the cheapest such is
 * named). A table, or `--json`.
 * Must not know: how the estimate is made (batch-plan.ts), how a batch is submitted.
 */

import {
  ASSUMED_TOKENS_PER_S,
  DEFAULT_BATCH_LINES,
  isBatchEndpoint,
  planBatch,
  planRental,
  readBatchInput,
  RENTAL_STARTUP_S,
  windowMs,
  type BatchPlan,
  type HistoryRow,
  type RentableGpu,
  type RentalPlan,
} from "../batch/index.js";
import { adminGet, type AdminTarget } from "./admin-client.js";
import { readFileOrFail } from "./batch-command.js";
import { CliFailure, EXIT_OK, UsageError } from "./cli-errors.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./print-json.js";
import { renderTable } from "./text-table.js";

export interface PlanFlags {
  readonly endpoint: string | undefined;
  readonly deadline: string | undefined;
  readonly budgetUsd: string | undefined;
  readonly credential: string | undefined;
  readonly json: boolean;
}

export async function planCommand(io: CliIo, t: AdminTarget, path: string, f: PlanFlags): Promise<number> {
  const endpoint = f.endpoint ?? "/v1/chat/completions";
  if (!isBatchEndpoint(endpoint) || endpoint === "/v1/embeddings")
    throw new UsageError("--endpoint: plan estimates generation: /v1/chat/completions or /v1/completions");
  const deadlineMs = windowMs(f.deadline ?? "24h");
  if (deadlineMs === undefined) throw new UsageError(`--deadline: a duration such as 8h or 90m, at most 7d`);
  const budgetUsd = f.budgetUsd === undefined ? undefined : Number(f.budgetUsd);
  if (budgetUsd !== undefined && !(Number.isFinite(budgetUsd) && budgetUsd > 0))
    throw new UsageError("--budget-usd: a number of US dollars greater than 0, e.g. 5");
  const input = readBatchInput(readFileOrFail(path).toString("utf8"), endpoint);
  if (!input.ok) {
    const problems = input.problems.map((e) => `  line ${e.line ?? "?"}: ${e.code}: ${e.message}`);
    throw new CliFailure(`${path} cannot run as a batch\n${problems.join("\n")}`);
  }
  const rentals = await batchRentals(t);
  // A node a batch rented (since stopped) is no part of the cluster alone.
  const rentedNodes = new Set(rentals.map((r) => r.node));
  const history = ((await adminGet(t, "/pair/v1/history?limit=10000")) as HistoryRow[]).filter(
    (h) => !rentedNodes.has(h.serving_node ?? ""),
  );
  const p = planBatch(input.lines, history, {
    deadlineS: deadlineMs / 1000,
    linesAtOnce: DEFAULT_BATCH_LINES,
  });
  const rent = p.meetsDeadline ? undefined : await rentalFor(t, p, budgetUsd, f.credential, rentals);
  if (f.json) return (printJson(io, { ...p, rent: rent ?? null }), EXIT_OK);
  io.stdout(clusterTable(p));
  if (p.models.some((m) => m.assumed))
    io.stdout(
      `Models with no completed request in history are assumed to give ${ASSUMED_TOKENS_PER_S} tokens/s a request.\n`,
    );
  if (p.meetsDeadline) {
    io.stdout(
      `The cluster alone finishes in about ${duration(p.seconds)}, within the ${duration(p.deadlineS)} deadline: nothing needs renting.\n`,
    );
    return EXIT_OK;
  }
  io.stdout(
    `The cluster alone needs about ${duration(p.seconds)}, past the ${duration(p.deadlineS)} deadline.\n`,
  );
  if (rent !== undefined && "options" in rent) io.stdout(rentalText(rent, budgetUsd));
  else io.stdout(`No rental options: ${rent?.unavailable ?? "none listed"}. Give it a longer --deadline.\n`);
  return EXIT_OK;
}

/** The Jobs GPUs priced for this plan, or why there are none (one model only: a GPU serves one). */
async function rentalFor(
  t: AdminTarget,
  p: BatchPlan,
  budgetUsd: number | undefined,
  credential: string | undefined,
  rentals: readonly BatchRentalRow[],
): Promise<RentalPlan | { readonly unavailable: string }> {
  if (p.models.length !== 1)
    return { unavailable: "the file asks for several models; plan one model's lines at a time" };
  const query = credential === undefined ? "" : `?credential=${encodeURIComponent(credential)}`;
  let gpus: RentableGpu[];
  try {
    gpus = (await adminGet(t, `/pair/v1/rented/job-hardware${query}`)) as RentableGpu[];
  } catch (cause) {
    return { unavailable: `Hugging Face Jobs' hardware could not be listed (${(cause as Error).message})` };
  }
  return planRental(p, gpus, budgetUsd, measuredGpus(rentals, p.models[0]!.model));
}

/** What a `--rent auto` batch rented (`pair.rent` of `GET /pair/v1/batches`). */
interface BatchRentalRow {
  readonly model: string;
  readonly node: string | null;
  readonly gpu: string | null;
  readonly measured_tokens_per_s: number | null;
}

/** The rentals of the node's newest 100 batches, newest first; none when the batches cannot be read. */
async function batchRentals(t: AdminTarget): Promise<BatchRentalRow[]> {
  const page = (await adminGet(t, "/pair/v1/batches?limit=100").catch(() => ({ data: [] }))) as {
    data?: { pair?: { rent?: BatchRentalRow | null } }[];
  };
  return (page.data ?? []).flatMap((b) => (b.pair?.rent == null ? [] : [b.pair.rent]));
}

/** Output tokens per second, by GPU, that rentals measured for `model` (the newest first wins). */
function measuredGpus(rentals: readonly BatchRentalRow[], model: string): Record<string, number> {
  const measured: Record<string, number> = {};
  for (const r of rentals) {
    if (r.model !== model || r.gpu === null || r.measured_tokens_per_s === null) continue;
    measured[r.gpu.replace(/ ×\d+$/, "")] ??= r.measured_tokens_per_s;
  }
  return measured;
}

function clusterTable(p: BatchPlan): string {
  const rows = p.models.map((m) => [
    m.model,
    String(m.lines),
    String(m.inputTokens),
    String(m.outputTokens),
    m.assumed ? `${m.tokensPerS.toFixed(0)} (assumed)` : m.tokensPerS.toFixed(0),
    duration(m.seconds),
  ]);
  const columns = [
    { header: "MODEL" },
    { header: "LINES", align: "right" as const },
    { header: "IN TOKENS", align: "right" as const },
    { header: "OUT TOKENS", align: "right" as const },
    { header: "TOKENS/S", align: "right" as const },
    { header: "TIME", align: "right" as const },
  ];
  return renderTable(columns, rows).join("\n") + "\n";
}

function rentalText(rent: RentalPlan, budgetUsd: number | undefined): string {
  const rows = rent.options.map((o) => [
    o.flavor,
    o.gpu,
    `$${o.usdPerHour.toFixed(2)}`,
    o.measured ? `${Math.round(o.tokensPerS)} (measured)` : `${o.tokensPerS} (assumed)`,
    duration(o.seconds),
    `$${o.costUsd.toFixed(2)}`,
    o.meetsDeadline ? (o.withinBudget ? "yes" : "over budget") : "too late",
  ]);
  const table = renderTable(
    [
      { header: "JOBS FLAVOR" },
      { header: "GPU" },
      { header: "$/H", align: "right" },
      { header: "TOKENS/S", align: "right" },
      { header: "DONE IN", align: "right" },
      { header: "COST", align: "right" },
      { header: "IN TIME" },
    ],
    rows,
  ).join("\n");
  const chosen = rent.options.find((o) => o.flavor === rent.recommended);
  const verdict =
    chosen === undefined
      ? `No Jobs GPU finishes it in time${budgetUsd === undefined ? "" : ` within $${budgetUsd}`}.`
      : `Cheapest in time: ${chosen.flavor}, done in about ${duration(chosen.seconds)} for about $${chosen.costUsd.toFixed(2)}: ` +
        `pair batch submit FILE --rent auto --deadline … rents it for the batch.`;
  return (
    `With one rented GPU beside the cluster (its rate assumed unless a rented node measured it; ${RENTAL_STARTUP_S / 60} min to start, billed per ` +
    "started minute until the batch is done):\n" +
    `${table}\n${verdict}\n`
  );
}

function duration(seconds: number): string {
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}
