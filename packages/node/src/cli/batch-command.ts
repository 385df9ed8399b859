/**
 * `pair batch submit|list|status|cancel|results`: OpenAI-style batches on the running node, through
 * its own `/v1/files` and `/v1/batches` routes on the client port (loopback: no key needed). `submit`
 * uploads a JSONL file and creates the batch; `status --wait` prints a progress line (done/total,
 * rate, ETA) until the batch ends; `results` prints the output file (or `--errors`, the error file).
 * Must not know: how batches run (batch/), HTTP beyond fetch.
 */

import { HOLDING_RUNTIME } from "@pair/cluster";
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { loadConfig } from "../config/index.js";
import { windowMs } from "../batch/index.js";
import { adminTarget, type AdminTarget } from "./admin-client.js";
import { planCommand } from "./batch-plan-command.js";
import { CliFailure, EXIT_OK, UsageError } from "./cli-errors.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./print-json.js";
import type { Command } from "./command.js";
import { CONFIG_OPTION, HELP_OPTION, JSON_OPTION, parseCommandWords } from "./command-args.js";
import { renderTable } from "./text-table.js";

const OPTIONS = {
  ...CONFIG_OPTION,
  ...JSON_OPTION,
  ...HELP_OPTION,
  endpoint: { type: "string" },
  window: { type: "string" },
  wait: { type: "boolean" },
  errors: { type: "boolean" },
  deadline: { type: "string" },
  "budget-usd": { type: "string" },
  credential: { type: "string" },
  rent: { type: "string" },
  model: { type: "string" },
} as const;

const ENDED = new Set(["completed", "failed", "cancelled", "expired"]);

interface BatchJson {
  id: string;
  status: string;
  endpoint: string;
  created_at: number;
  in_progress_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  output_file_id: string | null;
  error_file_id: string | null;
  errors: { data: { code: string; message: string; line: number | null }[] } | null;
  pair?: {
    running: number;
    pending: number;
    reruns: number;
    rent?: RentJson | null;
    events?: { at: string; state: string; reason: string | null }[];
  };
}

interface RentJson {
  state: string;
  node: string | null;
  flavor: string | null;
  spent_usd: number;
  budget_usd: number | null;
  stop_reason: string | null;
  note: string | null;
}

async function target(io: CliIo, configFile: string | undefined): Promise<AdminTarget> {
  return adminTarget(
    await loadConfig({ file: configFile, env: io.env, homeDir: io.homeDir, hostName: io.hostName }),
  );
}

/** A call to the node's client port; its OpenAI error becomes a CliFailure naming the code. */
async function call(t: AdminTarget, path: string, init?: RequestInit): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(`http://${t.address}${path}`, { ...init, signal: AbortSignal.timeout(60_000) });
  } catch (cause) {
    throw new CliFailure(
      `no PAIR node answers on ${t.address} — start one with \`pair serve\` (${(cause as Error).message})`,
    );
  }
  if (res.ok) return res;
  const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
  throw new CliFailure(
    `the node answered HTTP ${res.status} for ${path}: ${body?.error?.code ?? "error"}: ${body?.error?.message ?? ""}`,
  );
}

async function getBatch(t: AdminTarget, id: string): Promise<BatchJson> {
  return (await (await call(t, `/v1/batches/${encodeURIComponent(id)}`)).json()) as BatchJson;
}

function progress(b: BatchJson, nowS: number): string {
  const c = b.request_counts;
  const done = c.completed + c.failed;
  const elapsed = Math.max(1, nowS - (b.in_progress_at ?? b.created_at));
  const rate = done / elapsed;
  const eta = rate > 0 && done < c.total ? `, ETA ${Math.ceil((c.total - done) / rate)} s` : "";
  return (
    `${b.id}  ${b.status}  ${done}/${c.total} done (${c.failed} failed), ${(rate * 60).toFixed(1)}/min${eta}` +
    (b.pair === undefined ? "" : `, ${b.pair.running} running`) +
    rentWords(b.pair?.rent)
  );
}

/** The rental's part of the progress line: what is rented, its state, its spend against the cap. */
function rentWords(r: RentJson | null | undefined): string {
  if (r === null || r === undefined) return "";
  const cap = r.budget_usd === null ? "" : ` of $${r.budget_usd.toFixed(2)}`;
  if (r.node === null) return `, rent auto: ${r.state === "unavailable" ? "none in time" : "nothing rented"}`;
  return `, rented ${r.flavor} (${r.node}) ${r.state}, $${r.spent_usd.toFixed(2)}${cap}`;
}

/** `pair batch status`: the progress line, then the batch's lifecycle events. */
function statusText(b: BatchJson, nowS: number): string {
  const events = (b.pair?.events ?? []).map((e) => `  ${e.at}  ${e.state}: ${e.reason ?? ""}`);
  return [progress(b, nowS), ...events].join("\n") + "\n";
}

/** Polls until the batch ends, a progress line on stderr whenever it moves. */
async function waitFor(io: CliIo, t: AdminTarget, id: string): Promise<BatchJson> {
  let last = "";
  for (;;) {
    const b = await getBatch(t, id);
    const line = progress(b, Math.floor(io.nowMs() / 1000));
    if (line !== last) io.stderr(`${line}\n`);
    last = line;
    if (ENDED.has(b.status)) return b;
    await HOLDING_RUNTIME.timers.sleep(1_000);
  }
}

export const batchCommand: Command = {
  name: "batch",
  summary: "run a JSONL file of requests over the cluster (OpenAI's Batch API)",
  usage: `Usage: pair batch plan FILE [--deadline 8h] [--budget-usd N] [--credential REF] [--endpoint ROUTE] [--json]
       pair batch submit FILE [--endpoint ROUTE] [--window 24h] [--wait] [--json]
             [--rent auto --deadline 8h [--budget-usd N] [--model M] [--credential REF]]
       pair batch list [--json]
       pair batch status ID [--wait] [--json]
       pair batch cancel ID [--json]
       pair batch results ID [--errors]

FILE is JSONL, one request a line: {"custom_id": "...", "method": "POST", "url": ROUTE, "body": {...}}.
ROUTE is /v1/chat/completions (default), /v1/completions or /v1/embeddings. Lines run on every
node that serves their model, behind users' own requests. --window is the completion window
(default 24h; e.g. 8h, 90m): lines not run by then end as batch_expired. --wait shows progress
until the batch ends. results prints the output file (each custom_id once); --errors the error file.
plan estimates whether the cluster alone finishes the file by --deadline (default 24h): tokens per
model, each node's measured rate from history (or a stated assumption), the time it takes; when it
does not, which Hugging Face Jobs GPU (listed with --credential's token, default pair/hf) would
finish it in time, when, and at what cost, within --budget-usd if given.
submit --rent auto plans the same at submit and again as lines finish: while the cluster alone
would miss --deadline, it rents the cheapest Jobs GPU that finishes in time (window = the time
left), and stops it when the batch ends, the deadline passes, the budget is reached or the
cluster alone is in time again. Without --rent a batch never rents.
See docs/batches.md.

  --config FILE  the node's config (else $PAIR_CONFIG, else the default file)
  --json         print JSON for scripts
  -h, --help     show this help`,
  async run(args, io) {
    const sub = args[0]?.startsWith("-") === true ? undefined : args[0];
    const word = sub === "submit" || sub === "plan" ? "FILE" : "ID (pair batch list shows them)";
    const flags = parseCommandWords(
      args.slice(sub === undefined ? 0 : 1),
      OPTIONS,
      sub === "list" || sub === undefined ? [] : [word],
    );
    const arg = flags.words[0];
    const t = await target(io, flags.values.config);
    const r: BatchRun = { io, t, values: flags.values, json: flags.values.json === true };
    switch (sub) {
      case "plan":
        return planCommand(io, t, arg!, {
          endpoint: flags.values.endpoint,
          deadline: flags.values.deadline,
          budgetUsd: flags.values["budget-usd"],
          credential: flags.values.credential,
          json: r.json,
        });
      case "submit":
        return submit(r, arg);
      case "list":
        return list(r);
      case "status":
        return status(r, arg!);
      case "cancel":
        return cancel(r, arg!);
      case "results":
        return results(r, arg!);
      case undefined:
        throw new UsageError(
          "pair batch: missing what to do (plan, submit, list, status, cancel or results)",
        );
      default:
        throw new UsageError(`pair batch: unknown '${sub}' (plan, submit, list, status, cancel or results)`);
    }
  },
};

/** What every subcommand is given: the node to ask, the parsed options, and whether to print JSON. */
interface BatchRun {
  readonly io: CliIo;
  readonly t: AdminTarget;
  readonly values: ReturnType<typeof parseCommandWords<typeof OPTIONS>>["values"];
  readonly json: boolean;
}

/** `pair batch submit FILE`: upload the file, create the batch, and refuse one its file fails. */
async function submit({ io, t, values, json }: BatchRun, arg: string | undefined): Promise<number> {
  if (arg === undefined) throw new UsageError("pair batch submit: missing FILE");
  const metadata = rentMetadata(values);
  const bytes = readFileOrFail(arg);
  const form = new FormData();
  form.set("purpose", "batch");
  form.set("file", new Blob([new Uint8Array(bytes)]), basename(arg));
  const file = (await (await call(t, "/v1/files", { method: "POST", body: form })).json()) as {
    id: string;
  };
  const created = (await (
    await call(t, "/v1/batches", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        input_file_id: file.id,
        endpoint: values.endpoint ?? "/v1/chat/completions",
        completion_window: values.window ?? values.deadline ?? "24h",
        ...(metadata === undefined ? {} : { metadata }),
      }),
    })
  ).json()) as BatchJson;
  if (created.status === "failed") {
    const problems =
      created.errors?.data.map((e) => `  line ${e.line ?? "?"}: ${e.code}: ${e.message}`) ?? [];
    throw new CliFailure(`the batch failed: its file cannot run as a batch\n${problems.join("\n")}`);
  }
  const shown = values.wait === true ? await waitFor(io, t, created.id) : created;
  if (json) printJson(io, shown);
  else io.stdout(`${progress(shown, Math.floor(io.nowMs() / 1000))}\n`);
  return EXIT_OK;
}

async function list({ io, t, json }: BatchRun): Promise<number> {
  const page = (await (await call(t, "/v1/batches?limit=100")).json()) as { data: BatchJson[] };
  if (json) return (printJson(io, page.data), EXIT_OK);
  const rows = page.data.map((b) => [
    b.id,
    b.status,
    `${b.request_counts.completed + b.request_counts.failed}/${b.request_counts.total}`,
    String(b.request_counts.failed),
    new Date(b.created_at * 1000).toISOString(),
  ]);
  if (rows.length === 0) io.stdout("no batches (pair batch submit FILE starts one)\n");
  else
    io.stdout(
      renderTable(
        [
          { header: "ID" },
          { header: "STATUS" },
          { header: "DONE", align: "right" },
          { header: "FAILED", align: "right" },
          { header: "CREATED" },
        ],
        rows,
      ).join("\n") + "\n",
    );
  return EXIT_OK;
}

async function status({ io, t, values, json }: BatchRun, id: string): Promise<number> {
  const b = values.wait === true ? await waitFor(io, t, id) : await getBatch(t, id);
  if (json) printJson(io, b);
  else io.stdout(statusText(b, Math.floor(io.nowMs() / 1000)));
  return EXIT_OK;
}

async function cancel({ io, t, json }: BatchRun, id: string): Promise<number> {
  const b = (await (
    await call(t, `/v1/batches/${encodeURIComponent(id)}/cancel`, { method: "POST" })
  ).json()) as BatchJson;
  if (json) printJson(io, b);
  else io.stdout(`${progress(b, Math.floor(io.nowMs() / 1000))}\n`);
  return EXIT_OK;
}

/** `pair batch results ID [--errors]`: the output (or error) file, once the batch has ended. */
async function results({ io, t, values }: BatchRun, id: string): Promise<number> {
  const b = await getBatch(t, id);
  const fileId = values.errors === true ? b.error_file_id : b.output_file_id;
  if (!ENDED.has(b.status))
    throw new CliFailure(
      `batch ${b.id} is ${b.status}: its results are written when it ends (pair batch status ${b.id} --wait)`,
    );
  if (fileId !== null) io.stdout(await (await call(t, `/v1/files/${fileId}/content`)).text());
  return EXIT_OK;
}

/** `--rent auto` and its limits as the batch's `metadata` (docs/batches.md), checked before the upload. */
function rentMetadata(v: {
  rent?: string | undefined;
  deadline?: string | undefined;
  "budget-usd"?: string | undefined;
  credential?: string | undefined;
  model?: string | undefined;
}): Record<string, string> | undefined {
  if (v.rent === undefined) {
    if (v["budget-usd"] !== undefined || v.model !== undefined)
      throw new UsageError("pair batch submit: --budget-usd and --model go with --rent auto");
    return undefined;
  }
  if (v.rent !== "auto") throw new UsageError("--rent: the one value is auto");
  if (v.deadline === undefined || windowMs(v.deadline) === undefined)
    throw new UsageError("--rent auto needs --deadline, a duration such as 8h or 90m, at most 7d");
  const budget = v["budget-usd"];
  if (budget !== undefined && !(Number(budget) > 0 && Number.isFinite(Number(budget))))
    throw new UsageError("--budget-usd: a number of US dollars greater than 0, e.g. 5");
  return {
    pair_rent: "auto",
    pair_deadline: v.deadline,
    ...(budget === undefined ? {} : { pair_budget_usd: budget }),
    ...(v.credential === undefined ? {} : { pair_credential: v.credential }),
    ...(v.model === undefined ? {} : { pair_model: v.model }),
  };
}

export function readFileOrFail(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (cause) {
    throw new CliFailure(`cannot read ${path}: ${(cause as Error).message}`);
  }
}
