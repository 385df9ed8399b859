/**
 * `pair rented create NAME --provider huggingface-job`: run a model as a Hugging Face Job for a batch
 * window (`--window 30m | 2h | 1h30m`, 1 min to 24 h) on a Jobs flavor (`--flavor l4x1`; the node
 * checks it against Hugging Face's list), then follow it like an endpoint create — one line per stage
 * (scheduling → running) with the time since the create and the cost so far, until its model is in the
 * cluster inventory. `--json` prints only the final node view; `--no-wait` returns after the create.
 * Everything goes through the running node's admin API; tokens stay in the OS credential store.
 * Must not know: Hugging Face's API, the ledger, how the node runs the job.
 */

import { EXIT_OK, UsageError } from "./cli-errors.js";
import type { CliIo } from "./cli-io.js";
import { CONFIG_OPTION, HELP_OPTION, JSON_OPTION, parseCommandWords } from "./command-args.js";
import { rentedCall } from "./rented-call.js";
import { followCreate, progressLine, spendFields, type CreatedNodeView } from "./rented-create-follow.js";

export const CREATE_JOB_USAGE = `       pair rented create NAME --provider huggingface-job --repo ID --flavor FLAVOR --window 2h
                          [--image IMAGE] [--secret NAME=REF]...
                          (--usd-per-day N | --usd-per-month N | --unlimited) [--idle-pause-min N]
                          [--credential REF] [--share] [--no-wait] [--config FILE] [--json]`;

const JOB_OPTIONS = {
  ...CONFIG_OPTION,
  ...JSON_OPTION,
  ...HELP_OPTION,
  provider: { type: "string" },
  credential: { type: "string" },
  repo: { type: "string" },
  flavor: { type: "string" },
  window: { type: "string" },
  image: { type: "string" },
  secret: { type: "string", multiple: true },
  "usd-per-day": { type: "string" },
  "usd-per-month": { type: "string" },
  unlimited: { type: "boolean" },
  "idle-pause-min": { type: "string" },
  share: { type: "boolean" },
  "no-wait": { type: "boolean" },
} as const;
/** The create call answers once Hugging Face took the job's create (or its answer was lost). */
const CREATE_TIMEOUT_MS = 120_000;
const MIN_WINDOW_MIN = 1;
const MAX_WINDOW_MIN = 24 * 60;

/** `--window`: `30m`, `2h`, `1h30m` → whole minutes in [1, 1440]. @throws UsageError */
export function parseWindowMin(text: string | undefined): number {
  if (text === undefined)
    throw new UsageError("create --provider huggingface-job needs --window (e.g. 30m, 2h)");
  const match = /^(?:(\d{1,4})h)?(?:(\d{1,5})m)?$/.exec(text.trim());
  const minutes =
    match === null || text.trim() === "" ? NaN : Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0);
  if (!Number.isInteger(minutes) || minutes < MIN_WINDOW_MIN || minutes > MAX_WINDOW_MIN)
    throw new UsageError(
      `--window: expected a duration like 30m, 2h or 1h30m, from 1m to 24h (Hugging Face's job ` +
        `timeout limit); got "${text}"`,
    );
  return minutes;
}

/** `--secret NAME=REF` (repeatable): Job secrets by environment name, each a credential reference. */
function secretsOf(values: readonly string[] | undefined): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const value of values ?? []) {
    const at = value.indexOf("=");
    if (at <= 0 || at === value.length - 1)
      throw new UsageError(`--secret: expected NAME=REF (e.g. HF_TOKEN=pair/hf-read), got "${value}"`);
    secrets[value.slice(0, at)] = value.slice(at + 1);
  }
  return secrets;
}

function describeWindow(minutes: number): string {
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return h === 0 ? `${m}m` : m === 0 ? `${h}h` : `${h}h${m}m`;
}

export async function runCreateJob(args: readonly string[], io: CliIo): Promise<number> {
  const { values, words } = parseCommandWords(args, JOB_OPTIONS, ["NAME"]);
  const name = words[0] ?? "";
  if (values.repo === undefined) throw new UsageError("create --provider huggingface-job needs --repo ID");
  if (values.flavor === undefined)
    throw new UsageError("create --provider huggingface-job needs --flavor (e.g. l4x1, a10g-small)");
  const windowMin = parseWindowMin(values.window);
  const secrets = secretsOf(values.secret);
  const body = {
    name,
    provider: "huggingface-job",
    ...(values.credential === undefined ? {} : { credential: values.credential }),
    repo: values.repo,
    flavor: values.flavor,
    window_min: windowMin,
    ...(values.image === undefined ? {} : { image: values.image }),
    ...(Object.keys(secrets).length === 0 ? {} : { secrets }),
    ...spendFields(values),
  };
  const json = values.json === true;
  if (!json)
    io.stdout(
      `creating ${name}: ${values.repo} as a Hugging Face Job on ${values.flavor} for ${describeWindow(windowMin)}\n`,
    );
  const view = (await rentedCall(io, values.config, "/pair/v1/rented/create", {
    body,
    timeoutMs: CREATE_TIMEOUT_MS,
  })) as CreatedNodeView;
  if (values["no-wait"] === true) {
    io.stdout(
      json
        ? `${JSON.stringify(view, null, 2)}\n`
        : `${progressLine(view)} — pair rented list shows its progress\n`,
    );
    return EXIT_OK;
  }
  const final = await followCreate(io, values.config, view, json);
  if (json) io.stdout(`${JSON.stringify(final.view, null, 2)}\n`);
  return final.code;
}
