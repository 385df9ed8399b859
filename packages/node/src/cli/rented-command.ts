/**
 * `pair rented attach | share | policy | reset | list | check`: the rented nodes this node sponsors, asked
 * of the running node over its admin API. Changes persist in the node's data dir (never a secret)
 * and reach peers at once. A refusal names its code (`insecure_url`, `literal_credential`, …) and
 * what to do; a secret given where a credential reference belongs is never repeated.
 * Must not know: how rented nodes are probed, routed to or stored.
 */

import { ROUTING_USES, type RoutingUse } from "../config/index.js";
import { CliFailure, EXIT_OK, UsageError } from "./cli-errors.js";
import type { CliIo } from "./cli-io.js";
import type { Command } from "./command.js";
import {
  CONFIG_OPTION,
  HELP_OPTION,
  JSON_OPTION,
  parseCommandWords,
  splitSubcommand,
  unknownWord,
} from "./command-args.js";
import { describeRented } from "./rented-describe.js";
import { renderTable } from "./text-table.js";
import { rentedCall } from "./rented-call.js";
import { runCatalog, runCreate, runHardware, CREATE_USAGE } from "./rented-create-command.js";
import { budgetOf } from "./rented-create-follow.js";
import { resumeFollowed } from "./rented-resume-follow.js";

const OPTIONS = { ...CONFIG_OPTION, ...JSON_OPTION, ...HELP_OPTION } as const;
const ATTACH_OPTIONS = {
  ...OPTIONS,
  provider: { type: "string" },
  "base-url": { type: "string" },
  endpoint: { type: "string" },
  credential: { type: "string" },
  share: { type: "boolean" },
  models: { type: "string" },
  "cold-start-s": { type: "string" },
  policy: { type: "string" },
  "usd-per-day": { type: "string" },
  "usd-per-month": { type: "string" },
  unlimited: { type: "boolean" },
} as const;
const POST_TIMEOUT_MS = 30_000;
/** A pause or delete waits for the provider to confirm. */
const LIFECYCLE_TIMEOUT_MS = 15 * 60_000;
const DELETE_OPTIONS = { ...OPTIONS, yes: { type: "boolean" } } as const;

const SUBCOMMANDS = [
  "list",
  "ls",
  "describe",
  "attach",
  "share",
  "policy",
  "reset",
  "check",
  "pause",
  "resume",
  "delete",
  "create",
  "catalog",
  "hardware",
] as const;

const USAGE = `Usage: pair rented list|ls [--config FILE] [--json]
       pair rented describe NAME [--config FILE] [--json]
       pair rented attach NAME --provider P (--base-url URL | --endpoint NS/NAME)
                          [--credential REF] [--share] [--models A,B] [--cold-start-s N]
                          [--policy USE] [--usd-per-day N | --usd-per-month N | --unlimited]
                          [--config FILE] [--json]
       pair rented share NAME on|off [--config FILE] [--json]
       pair rented policy NAME USE [--config FILE] [--json]
       pair rented reset NAME [--config FILE] [--json]
       pair rented check [--config FILE] [--json]
       pair rented pause|resume NAME [--config FILE] [--json]
       pair rented delete NAME [--yes] [--config FILE] [--json]
${CREATE_USAGE}

Rented nodes are GPUs outside the LAN that this node (their sponsor) holds for the cluster: it keeps
their credential (in the OS credential store) and forwards requests to them over verified HTTPS.
Peers see their name, state, models and price — never their URL or credential.

  list     the rented nodes this node sponsors: state, models, shared, policy, warnings (also: ls)
  describe one rented node on one page: state, price, budget and spend, idle timer, stop
           obligations, warnings, recent state history
  attach   add an existing endpoint now (kept in the data dir, no restart). Providers:
           openai-compatible | huggingface-job | huggingface-providers (--base-url, https://…/v1),
           huggingface-endpoint (--endpoint NAMESPACE/NAME), runpod (--endpoint POD_ID).
           An endpoint is managed (PAIR wakes, pauses and bills it): it needs a budget,
           --usd-per-day N (or --usd-per-month N), or --unlimited for no cap.
           --credential REF names a secret stored with \`pair credential set\`
           (os-credential-store:SERVICE/ACCOUNT, or ACCOUNT for service "pair"); never the secret.
  share    let peers use it (on) or only callers on this node (off, the default)
  policy   when it is used: ${ROUTING_USES.join(", ")}
  reset    forget what share and policy changed at run time: the config file's values (or those
           the node was attached or created with) apply again; the node itself stays
  check    probe every rented node now
  pause    pause a managed Hugging Face endpoint (it stops billing); resume starts it again
           (refused while its budget is spent) and shows its progress until it serves
  delete   delete a managed endpoint on the provider — asks you to type its name, unless --yes
  create   create a managed Hugging Face endpoint (private; HF scale-to-zero on as the backstop),
           on the hardware offer matching --gpu (and --region/--vendor/--instance-size); shows
           progress until it runs (--no-wait: return at once). Needs a budget: --usd-per-day N
           (or --usd-per-month N) caps it, --unlimited runs it with no cap; then the ledger's
           authorization.
           --provider huggingface-job runs the model as a Hugging Face Job for a batch window
           instead: --flavor (a Jobs flavor, e.g. l4x1), --window (30m, 2h, 1h30m; at most 24h,
           the job's hard timeout too), --image (any image with vllm), --secret NAME=REF (Job
           secrets, repeatable). Its port is token-protected; at the window's end PAIR cancels
           the job and the node takes no more requests (pair rented resume opens a new window).
  catalog  models in Hugging Face's endpoint catalog (for --catalog)
  hardware GPUs you may create on: count, VRAM, $/hr, quota left, vendor/region, instance

Options:
  --config FILE  the node's config (else $PAIR_CONFIG, else the default file (README))
  --json         print JSON for scripts
  -h, --help     show this help`;

interface RentedJson {
  readonly name: string;
  readonly provider: string;
  readonly state: string;
  readonly models: readonly string[];
  readonly shared: boolean;
  readonly policy: string;
  readonly eligible: boolean;
  readonly reason: string | null;
  readonly warnings: readonly string[];
}

const call = rentedCall;

function print(io: CliIo, json: boolean, value: unknown, rows: readonly RentedJson[]): void {
  if (json) {
    io.stdout(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  const lines = renderTable(
    ["NAME", "PROVIDER", "STATE", "SHARED", "POLICY", "MODELS", "NOTE"].map((header) => ({ header })),
    rows.map((r) => [
      r.name,
      r.provider,
      r.state,
      r.shared ? "yes" : "no",
      r.policy,
      r.models.join(", ") || "-",
      [r.eligible ? "" : (r.reason ?? "ineligible"), ...r.warnings].filter((t) => t !== "").join("; ") || "-",
    ]),
  );
  io.stdout(`${lines.join("\n")}\n`);
}

function attachEntry(
  name: string,
  values: Record<string, string | boolean | undefined>,
): Record<string, unknown> {
  const provider = values["provider"];
  if (typeof provider !== "string") throw new UsageError("attach needs --provider");
  const coldStart = values["cold-start-s"];
  const coldStartS = typeof coldStart === "string" ? Number(coldStart) : undefined;
  if (coldStartS !== undefined && !(coldStartS > 0))
    throw new UsageError("--cold-start-s: expected seconds > 0");
  const models = values["models"];
  const policy = values["policy"];
  const budget = budgetOf({
    "usd-per-day": typeof values["usd-per-day"] === "string" ? values["usd-per-day"] : undefined,
    "usd-per-month": typeof values["usd-per-month"] === "string" ? values["usd-per-month"] : undefined,
    unlimited: values["unlimited"] === true,
  });
  return {
    name,
    provider,
    ...(typeof values["base-url"] === "string" ? { base_url: values["base-url"] } : {}),
    ...(typeof values["endpoint"] === "string" ? { endpoint: values["endpoint"] } : {}),
    ...(typeof values["credential"] === "string" ? { credential: values["credential"] } : {}),
    share_with_cluster: values["share"] === true,
    ...(typeof models === "string"
      ? {
          models: models
            .split(",")
            .map((m) => m.trim())
            .filter(Boolean),
        }
      : {}),
    ...(coldStartS === undefined ? {} : { timeouts: { cold_start_s: coldStartS } }),
    ...(typeof policy === "string" ? { routing: { use: policy } } : {}),
    ...(budget === undefined ? {} : { budget }),
  };
}

async function run(args: readonly string[], io: CliIo): Promise<number> {
  const { sub, rest } = splitSubcommand(args);
  switch (sub) {
    case "list":
    case "ls":
    case "check": {
      const { values } = parseCommandWords(rest, OPTIONS, []);
      const rows = (await call(
        io,
        values.config,
        sub === "check" ? "/pair/v1/rented/probe" : "/pair/v1/rented",
        sub === "check" ? { body: {}, timeoutMs: POST_TIMEOUT_MS } : undefined,
      )) as RentedJson[];
      print(io, values.json === true, rows, rows);
      return EXIT_OK;
    }
    case "describe": {
      const { values, words } = parseCommandWords(rest, OPTIONS, ["NAME"]);
      await describeRented(io, values.config, words[0] ?? "", values.json === true);
      return EXIT_OK;
    }
    case "attach": {
      const { values, words } = parseCommandWords(rest, ATTACH_OPTIONS, ["NAME"]);
      const entry = attachEntry(words[0] ?? "", values);
      const node = (await call(io, values.config, "/pair/v1/rented/attach", {
        body: entry,
        timeoutMs: POST_TIMEOUT_MS,
      })) as RentedJson;
      print(io, values.json === true, node, [node]);
      return EXIT_OK;
    }
    case "share": {
      const { values, words } = parseCommandWords(rest, OPTIONS, ["NAME", "on|off"]);
      const [name, onOff] = words;
      if (onOff !== "on" && onOff !== "off") throw new UsageError("share: expected on or off");
      const node = (await call(io, values.config, "/pair/v1/rented/share", {
        body: { name, share: onOff === "on" },
        timeoutMs: POST_TIMEOUT_MS,
      })) as RentedJson;
      print(io, values.json === true, node, [node]);
      return EXIT_OK;
    }
    case "policy": {
      const { values, words } = parseCommandWords(rest, OPTIONS, ["NAME", "USE"]);
      const [name, use] = words;
      if (!(ROUTING_USES as readonly (string | undefined)[]).includes(use))
        throw new UsageError(`policy: expected one of ${ROUTING_USES.join(", ")}`);
      const node = (await call(io, values.config, "/pair/v1/rented/policy", {
        body: { name, use: use as RoutingUse },
        timeoutMs: POST_TIMEOUT_MS,
      })) as RentedJson;
      print(io, values.json === true, node, [node]);
      return EXIT_OK;
    }
    case "reset": {
      const { values, words } = parseCommandWords(rest, OPTIONS, ["NAME"]);
      const node = (await call(io, values.config, "/pair/v1/rented/reset", {
        body: { name: words[0] },
        timeoutMs: POST_TIMEOUT_MS,
      })) as RentedJson;
      print(io, values.json === true, node, [node]);
      return EXIT_OK;
    }
    case "pause":
    case "resume":
    case "delete": {
      const { values, words } = parseCommandWords(rest, DELETE_OPTIONS, ["NAME"]);
      const name = words[0] ?? "";
      if (sub !== "delete" && values.yes === true) throw new UsageError("--yes is for delete only");
      if (sub === "delete" && values.yes !== true) await confirmDelete(io, name);
      if (sub === "resume") {
        const { code, view } = await resumeFollowed(io, values.config, name, values.json === true);
        print(io, values.json === true, view, [view as unknown as RentedJson]);
        return code;
      }
      const node = (await call(io, values.config, "/pair/v1/rented/lifecycle", {
        body: { name, action: sub },
        timeoutMs: LIFECYCLE_TIMEOUT_MS,
      })) as RentedJson;
      print(io, values.json === true, node, [node]);
      return EXIT_OK;
    }
    case "create":
      return runCreate(rest, io);
    case "catalog":
      return runCatalog(rest, io);
    case "hardware":
      return runHardware(rest, io);
    default:
      throw new UsageError(
        sub === undefined ? "expected a subcommand" : unknownWord("subcommand", sub, SUBCOMMANDS),
      );
  }
}

export const rentedCommand: Command = {
  name: "rented",
  summary: "rented GPUs this node sponsors: list, describe, attach, create, share, policy, reset, check",
  usage: USAGE,
  run,
};

/** Delete only when the user types the node's name (on a terminal); elsewhere --yes is required. */
async function confirmDelete(io: CliIo, name: string): Promise<void> {
  const input = io.stdin();
  if (input.isTTY !== true)
    throw new CliFailure(
      `delete removes rented node ${name}'s endpoint on the provider, for good; run it again with --yes to confirm`,
    );
  io.stderr(
    `Delete the endpoint of rented node ${name} on the provider, for good? Type its name to confirm: `,
  );
  const typed = await new Promise<string>((resolve) => {
    let text = "";
    const onData = (chunk: Buffer | string) => {
      text += chunk.toString();
      const end = text.indexOf("\n");
      if (end >= 0) {
        input.off("data", onData);
        input.pause();
        resolve(text.slice(0, end).trim());
      }
    };
    input.on("data", onData);
    input.resume();
  });
  if (typed !== name) throw new CliFailure(`not deleted: you typed "${typed}", not "${name}"`);
}
