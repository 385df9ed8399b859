/**
 * Following a rented node being created (`pair rented create`, endpoints and jobs alike): poll the
 * node's admin API and print one line per provider state (pending → initializing → running for an
 * endpoint, scheduling → running for a job) with the time since the create and the cost so far —
 * a live line on a terminal, a line per state and every 30 s elsewhere (live-line.ts) — until it runs with its model in the cluster inventory (exit 0), fails (exit 1) or a stop signal
 * arrives (it goes on being created). Also the shared number flag of the create commands.
 * Must not know: the provider's API, how the node creates anything.
 */

import { HOLDING_RUNTIME } from "@pair/cluster";
import { CliFailure, EXIT_FAILURE, EXIT_OK, UsageError } from "./cli-errors.js";
import { nextStopSignal, type CliIo } from "./cli-io.js";
import { rentedCall } from "./rented-call.js";
import { intFlag } from "./command-args.js";
import { liveLine } from "./live-line.js";

/** How often the node is asked for progress (PAIR_RENTED_POLL_MS overrides it, for tests). */
const POLL_MS = 1_000;

export interface CreatedNodeView {
  readonly name: string;
  readonly state: string;
  readonly models: readonly string[];
  readonly provider_state: string | null;
  readonly provider_message: string | null;
  readonly last_error: string | null;
  readonly created: { readonly elapsed_s: number } | null;
  readonly managed: { readonly spend_usd: { readonly total: number } | null } | null;
}

export function numberFlag(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!(value > 0) || !Number.isFinite(value))
    throw new UsageError(`${flag}: expected a number > 0, got "${text}"`);
  return value;
}

/** The budget flags of `create` and `attach`. */
export interface BudgetFlags {
  readonly "usd-per-day"?: string | undefined;
  readonly "usd-per-month"?: string | undefined;
  readonly unlimited?: boolean | undefined;
}

/** The entry's `budget` from the flags; undefined when none was given. @throws UsageError */
export function budgetOf(values: BudgetFlags): Record<string, unknown> | undefined {
  const perDay = numberFlag("--usd-per-day", values["usd-per-day"]);
  const perMonth = numberFlag("--usd-per-month", values["usd-per-month"]);
  const capped = perDay !== undefined || perMonth !== undefined;
  if (values.unlimited === true && capped)
    throw new UsageError(
      "--unlimited contradicts --usd-per-day / --usd-per-month: give a cap or --unlimited",
    );
  if (values.unlimited === true) return { unlimited: true };
  if (!capped) return undefined;
  return {
    ...(perDay === undefined ? {} : { usd_per_day: perDay }),
    ...(perMonth === undefined ? {} : { usd_per_month: perMonth }),
  };
}

/** The create body's budget: a cap, or `--unlimited` said out loud (a node PAIR bills needs one). */
function budgetField(values: BudgetFlags): Record<string, unknown> {
  const budget = budgetOf(values);
  if (budget === undefined)
    throw new UsageError(
      "a budget is required (PAIR starts and bills this node): --usd-per-day N caps what it may spend " +
        "each day (--usd-per-month N each month); --unlimited runs it with no cap",
    );
  return budget;
}

/**
 * The create body's money and lifecycle fields, from the flags both kinds of create take. Throws a
 * UsageError (exit 2) before anything is asked of the node when no budget is given.
 */
export function spendFields(
  values: BudgetFlags & {
    readonly "idle-pause-min"?: string | undefined;
    readonly share?: boolean | undefined;
  },
): Record<string, unknown> {
  const idle = values["idle-pause-min"];
  return {
    budget: budgetField(values),
    ...(idle === undefined
      ? {}
      : { lifecycle: { idle_pause_min: intFlag("--idle-pause-min", idle, 1, 10_080) } }),
    share_with_cluster: values.share === true,
  };
}

function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** `initializing (1:05, $0.02)`: the state, the time since `elapsedS` began (else the create), the cost. */
export function progressLine(view: CreatedNodeView, elapsedS = view.created?.elapsed_s ?? 0): string {
  const word = view.provider_state ?? view.state;
  return `${word} (${clock(elapsedS)}, $${(view.managed?.spend_usd?.total ?? 0).toFixed(2)})`;
}

/** How often the node is asked for progress: each second, or PAIR_RENTED_POLL_MS (tests). */
export function pollMsOf(io: CliIo): number {
  return Number(io.env["PAIR_RENTED_POLL_MS"] ?? POLL_MS) || POLL_MS;
}

/** The rented node's row in the node's list. @throws CliFailure when it is gone */
export async function rentedRow(
  io: CliIo,
  configFile: string | undefined,
  name: string,
): Promise<CreatedNodeView> {
  const rows = (await rentedCall(io, configFile, "/pair/v1/rented", undefined)) as CreatedNodeView[];
  const row = rows.find((r) => r.name === name);
  if (row === undefined) throw new CliFailure(`rented node ${name} is gone from the node's list`);
  return row;
}

/** What a follow is of: a create (the default) or a resume. */
export interface FollowOptions {
  /** Put before each line, e.g. `resuming t4: `. */
  readonly prefix?: string;
  /** Elapsed time counts from here (io.nowMs) instead of from the create. */
  readonly sinceMs?: number;
  /** What goes on when the user stops following, e.g. "goes on being created". */
  readonly goesOn?: string;
  /** A state in which the wait is over though the node does not run (a resume: it wakes on request). */
  readonly restsIn?: (state: string) => boolean;
}

/** Poll the node until it runs with its model listed, fails, or a stop signal arrives. */
export async function followCreate(
  io: CliIo,
  configFile: string | undefined,
  first: CreatedNodeView,
  json: boolean,
  options: FollowOptions = {},
): Promise<{ code: number; view: CreatedNodeView }> {
  const pollMs = pollMsOf(io);
  const live = liveLine(io);
  const stop = nextStopSignal(io.signals);
  let stopped = false;
  void stop.signal.then(() => {
    stopped = true;
  });
  const line = (view: CreatedNodeView) =>
    `${options.prefix ?? ""}${progressLine(
      view,
      options.sinceMs === undefined ? undefined : (io.nowMs() - options.sinceMs) / 1000,
    )}`;
  let view = first;
  try {
    for (;;) {
      const word = view.provider_state ?? view.state;
      // "running" is shown once, with its model, when the inventory lists it.
      if (!json && word !== "running") live.update(word, line(view));
      if (view.provider_state === "failed" || view.state === "failed") {
        live.finish();
        io.stderr(
          `rented node ${view.name} failed: ${view.provider_message ?? view.last_error ?? "Hugging Face gave no reason"}\n`,
        );
        return { code: EXIT_FAILURE, view };
      }
      if (view.state === "running" && view.models.length > 0) {
        if (!json) live.finish(`${line(view)} — model ${view.models.join(", ")} is in the cluster inventory`);
        return { code: EXIT_OK, view };
      }
      if (options.restsIn?.(view.state) === true) return { code: EXIT_OK, view };
      if (stopped) {
        live.finish();
        io.stderr(
          `stopped following; ${view.name} ${options.goesOn ?? "goes on being created"} (pair rented list shows it)\n`,
        );
        return { code: EXIT_OK, view };
      }
      await HOLDING_RUNTIME.timers.sleep(pollMs);
      view = await rentedRow(io, configFile, view.name);
    }
  } finally {
    live.finish();
    stop.cancel();
  }
}
