/**
 * `pair rented create | catalog | hardware`: create a managed Hugging Face endpoint on the hardware
 * offer matching `--gpu` (and `--region`, `--vendor`, `--instance-size`; an unknown or ambiguous choice
 * is an error listing the choices), then follow it — one line per provider state with the time since
 * the create and the cost so far — until it runs and its model is in the cluster inventory (exit 0) or
 * fails (Hugging Face's message, exit 1). `--json` prints only the final node view. Everything goes
 * through the running node's admin API; the token stays in the OS credential store.
 * `--provider huggingface-job` is rented-create-job-command.ts.
 * Must not know: Hugging Face's API, the ledger, how the node creates the endpoint.
 */

import { CliFailure, EXIT_OK, UsageError } from "./cli-errors.js";
import type { CliIo } from "./cli-io.js";
import { CONFIG_OPTION, HELP_OPTION, intFlag, JSON_OPTION, parseCommandWords } from "./command-args.js";
import { rentedCall } from "./rented-call.js";
import { CREATE_JOB_USAGE, runCreateJob } from "./rented-create-job-command.js";
import { followCreate, progressLine, spendFields, type CreatedNodeView } from "./rented-create-follow.js";
import { renderTable } from "./text-table.js";

export const CREATE_USAGE = `       pair rented create NAME (--repo ID [--image NAME:TAG] | --catalog ID) --gpu GPU [--region R] [--vendor V]
                          [--instance-size S] [--access private|authenticated]
                          (--usd-per-day N | --usd-per-month N | --unlimited)
                          [--scale-to-zero-min N] [--idle-pause-min N] [--credential REF] [--share]
                          [--no-wait]
                          [--provider huggingface-endpoint] [--config FILE] [--json]
${CREATE_JOB_USAGE}
       pair rented catalog [--credential REF] [--config FILE] [--json]
       pair rented hardware [--credential REF] [--namespace NS] [--config FILE] [--json]`;

const OPTIONS = { ...CONFIG_OPTION, ...JSON_OPTION, ...HELP_OPTION, credential: { type: "string" } } as const;
const HARDWARE_OPTIONS = { ...OPTIONS, namespace: { type: "string" } } as const;
const CREATE_OPTIONS = {
  ...OPTIONS,
  provider: { type: "string" },
  repo: { type: "string" },
  catalog: { type: "string" },
  image: { type: "string" },
  gpu: { type: "string" },
  region: { type: "string" },
  vendor: { type: "string" },
  "instance-size": { type: "string" },
  access: { type: "string" },
  "scale-to-zero-min": { type: "string" },
  "usd-per-day": { type: "string" },
  "usd-per-month": { type: "string" },
  unlimited: { type: "boolean" },
  "idle-pause-min": { type: "string" },
  share: { type: "boolean" },
  "no-wait": { type: "boolean" },
} as const;
/** The create call answers once Hugging Face took the create (or its answer was lost). */
const CREATE_TIMEOUT_MS = 120_000;

interface HardwareRow {
  readonly vendor: string;
  readonly region: string;
  readonly accelerator: string;
  readonly instance_type: string;
  readonly instance_size: string;
  readonly gpu: string;
  readonly gpus: number;
  readonly vram_gb: number | null;
  readonly usd_per_hour: number;
  readonly quota_available: number | null;
}

function query(values: { credential?: string; namespace?: string }): string {
  const q = new URLSearchParams();
  if (values.credential !== undefined) q.set("credential", values.credential);
  if (values.namespace !== undefined) q.set("namespace", values.namespace);
  const text = q.toString();
  return text === "" ? "" : `?${text}`;
}

function describeOffer(o: HardwareRow): string {
  return `${o.gpu} ${o.instance_size} (${o.vendor}/${o.region}, ${o.instance_type}, $${o.usd_per_hour.toFixed(2)}/h)`;
}

/** The one offer `--gpu` (and the narrowing flags) names; otherwise an error listing the choices. */
export function pickOffer(
  rows: readonly HardwareRow[],
  want: { gpu: string; region?: string; vendor?: string; instanceSize?: string },
): HardwareRow {
  const gpu = want.gpu.toLowerCase();
  const byGpu = rows.filter((r) => r.gpu.toLowerCase() === gpu || r.instance_type.toLowerCase() === gpu);
  if (byGpu.length === 0) {
    const names = [...new Set(rows.map((r) => r.gpu))].sort();
    throw new CliFailure(
      `unknown GPU "${want.gpu}": the hardware offered is ${names.join(", ") || "(none)"} (pair rented hardware lists it)`,
    );
  }
  const matches = byGpu.filter(
    (r) =>
      (want.region === undefined || r.region === want.region) &&
      (want.vendor === undefined || r.vendor === want.vendor) &&
      (want.instanceSize === undefined || r.instance_size === want.instanceSize),
  );
  const [only] = matches;
  if (matches.length === 1 && only !== undefined) return only;
  const choices = (matches.length === 0 ? byGpu : matches).map((r) => `  ${describeOffer(r)}`);
  throw new CliFailure(
    `${matches.length === 0 ? "no" : "more than one"} ${want.gpu} offer matches; choose with --region, --vendor, --instance-size:\n${choices.join("\n")}`,
  );
}

/** The `--provider` value among the words (before any `--`), if given. */
function providerOf(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? "";
    if (arg === "--") return undefined;
    if (arg === "--provider") return args[i + 1];
    if (arg.startsWith("--provider=")) return arg.slice("--provider=".length);
  }
  return undefined;
}

export async function runCreate(args: readonly string[], io: CliIo): Promise<number> {
  const provider = providerOf(args);
  if (provider === "huggingface-job") return runCreateJob(args, io);
  if (provider !== undefined && provider !== "huggingface-endpoint")
    throw new UsageError(
      `--provider: huggingface-endpoint (the default) or huggingface-job, got "${provider}"`,
    );
  const { values, words } = parseCommandWords(args, CREATE_OPTIONS, ["NAME"]);
  const name = words[0] ?? "";
  if ((values.repo === undefined) === (values.catalog === undefined))
    throw new UsageError("create needs exactly one of --repo ID or --catalog ID");
  if (values.gpu === undefined) throw new UsageError("create needs --gpu (pair rented hardware lists them)");
  if (values.access !== undefined && values.access !== "private" && values.access !== "authenticated")
    throw new UsageError(
      values.access === "public"
        ? "--access public: PAIR never creates a public endpoint (private or authenticated)"
        : "--access: private or authenticated",
    );
  const spend = spendFields(values);
  const rows = (await rentedCall(
    io,
    values.config,
    `/pair/v1/rented/hardware${query(values)}`,
    undefined,
  )) as HardwareRow[];
  const offer = pickOffer(rows, {
    gpu: values.gpu,
    ...(values.region === undefined ? {} : { region: values.region }),
    ...(values.vendor === undefined ? {} : { vendor: values.vendor }),
    ...(values["instance-size"] === undefined ? {} : { instanceSize: values["instance-size"] }),
  });
  const body = {
    name,
    provider: "huggingface-endpoint",
    ...(values.credential === undefined ? {} : { credential: values.credential }),
    ...(values.repo === undefined ? {} : { repo: values.repo }),
    ...(values.catalog === undefined ? {} : { catalog: values.catalog }),
    ...(values.image === undefined ? {} : { image: values.image }),
    vendor: offer.vendor,
    region: offer.region,
    instance_type: offer.instance_type,
    instance_size: offer.instance_size,
    access: values.access ?? "private",
    ...(values["scale-to-zero-min"] === undefined
      ? {}
      : { scale_to_zero_min: intFlag("--scale-to-zero-min", values["scale-to-zero-min"], 1, 1_440) }),
    ...spend,
  };
  const json = values.json === true;
  if (!json)
    io.stdout(`creating ${name}: ${values.repo ?? values.catalog ?? ""} on ${describeOffer(offer)}\n`);
  let view = (await rentedCall(io, values.config, "/pair/v1/rented/create", {
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
  return followCreate(io, values.config, view, json).then((final) => {
    view = final.view;
    if (json) io.stdout(`${JSON.stringify(view, null, 2)}\n`);
    return final.code;
  });
}

export async function runCatalog(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandWords(args, OPTIONS, []);
  const rows = (await rentedCall(
    io,
    values.config,
    `/pair/v1/rented/catalog${query(values)}`,
    undefined,
  )) as {
    repo_id: string;
  }[];
  if (values.json === true) io.stdout(`${JSON.stringify(rows, null, 2)}\n`);
  else
    io.stdout(
      `${renderTable(
        [{ header: "MODEL (use with --catalog)" }],
        rows.map((r) => [r.repo_id]),
      ).join("\n")}\n`,
    );
  return EXIT_OK;
}

export async function runHardware(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandWords(args, HARDWARE_OPTIONS, []);
  const rows = (await rentedCall(
    io,
    values.config,
    `/pair/v1/rented/hardware${query(values)}`,
    undefined,
  )) as HardwareRow[];
  if (values.json === true) {
    io.stdout(`${JSON.stringify(rows, null, 2)}\n`);
    return EXIT_OK;
  }
  const lines = renderTable(
    [
      { header: "GPU" },
      { header: "COUNT", align: "right" },
      { header: "VRAM", align: "right" },
      { header: "$/HR", align: "right" },
      { header: "QUOTA", align: "right" },
      { header: "VENDOR/REGION" },
      { header: "INSTANCE" },
    ],
    rows.map((r) => [
      r.gpu,
      String(r.gpus),
      r.vram_gb === null ? "-" : `${r.vram_gb} GB`,
      r.usd_per_hour.toFixed(2),
      r.quota_available === null ? "-" : String(r.quota_available),
      `${r.vendor}/${r.region}`,
      `${r.instance_type} ${r.instance_size}`,
    ]),
  );
  io.stdout(`${lines.join("\n")}\n`);
  return EXIT_OK;
}
