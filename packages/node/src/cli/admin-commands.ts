/**
 * `pair status`, `pair models`, `pair jobs`, `pair history`: ask the running node over its admin
 * API and print a table for a person, or with `--json` exactly the JSON of docs/reference.md.
 * Must not know: how the node computes any of it, HTTP details (admin-client.ts), table layout.
 */

import { loadConfig } from "../config/index.js";
import { adminGet, adminTarget } from "./admin-client.js";
import {
  asModels,
  asNodes,
  asStatus,
  asWorkloads,
  modelLines,
  nodeLines,
  statusLines,
  workloadLines,
} from "./admin-views.js";
import { EXIT_OK, UsageError } from "./cli-errors.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./print-json.js";
import type { Command } from "./command.js";
import { CONFIG_OPTION, HELP_OPTION, intFlag, JSON_OPTION, parseCommandArgs } from "./command-args.js";
import { parseSince } from "./parse-since.js";

const COMMON_OPTIONS = { ...CONFIG_OPTION, ...JSON_OPTION, ...HELP_OPTION } as const;

const COMMON_HELP = `Options:
  --config FILE  the node's config (else $PAIR_CONFIG, else the default file (README)): its
                 node.listen is where the node is asked, its data_dir holds the admin token
  --json         print JSON for scripts instead of a table
  -h, --help     show this help`;

/** Largest `--limit` the node honours. */
const MAX_HISTORY_LIMIT = 100_000;

/** GET `path` of the node the config names. @throws CliFailure naming what failed */
export async function ask(io: CliIo, configFile: string | undefined, path: string): Promise<unknown> {
  const loaded = await loadConfig({
    file: configFile,
    env: io.env,
    homeDir: io.homeDir,
    hostName: io.hostName,
  });
  return adminGet(adminTarget(loaded), path);
}

function printLines(io: CliIo, lines: readonly string[]): void {
  io.stdout(lines.map((line) => `${line}\n`).join(""));
}

export const statusCommand: Command = {
  name: "status",
  summary: "this node: identity, listen address, engines, workloads, peers, rented nodes",
  usage: `Usage: pair status [--config FILE] [--json]

Shows the running node: its name and version, listen address, data dir and config file, every
engine (up or down, load, models), running and queued workloads, peers, rented nodes and open stop
obligations.

${COMMON_HELP}`,
  async run(args, io) {
    const flags = parseCommandArgs(args, COMMON_OPTIONS);
    const status = asStatus(await ask(io, flags.config, "/pair/v1/status"));
    if (flags.json === true) printJson(io, status);
    else printLines(io, statusLines(status));
    return EXIT_OK;
  },
};

export const modelsCommand: Command = {
  name: "models",
  aliases: ["ls", "list"],
  summary: "the merged inventory: model → nodes serving it",
  usage: `Usage: pair models [--config FILE] [--json]
       (also: pair ls, pair list)

Lists every model some node can serve now, with the nodes serving it.
--json prints [{"model": "...", "nodes": ["..."]}].

${COMMON_HELP}`,
  async run(args, io) {
    const flags = parseCommandArgs(args, COMMON_OPTIONS);
    const models = asModels(await ask(io, flags.config, "/pair/v1/models"));
    if (flags.json === true) printJson(io, models);
    else printLines(io, modelLines(models));
    return EXIT_OK;
  },
};

export const nodesCommand: Command = {
  name: "nodes",
  summary: "this node and its paired peers: state, load, models",
  usage: `Usage: pair nodes [--config FILE] [--json]

Lists this node, then every paired peer: kind (self or peer), state (up or down), load (requests in
flight / capacity), when it last answered, and the models it serves. A peer that stops answering is
shown down within a few seconds, and up again with its next answer.
--json prints [{"name", "kind", "node_id", "state", "models", "in_flight", "capacity", "last_seen"}].

${COMMON_HELP}`,
  async run(args, io) {
    const flags = parseCommandArgs(args, COMMON_OPTIONS);
    const nodes = asNodes(await ask(io, flags.config, "/pair/v1/nodes"));
    if (flags.json === true) printJson(io, nodes);
    else printLines(io, nodeLines(nodes, io.nowMs()));
    return EXIT_OK;
  },
};

export const jobsCommand: Command = {
  name: "jobs",
  summary: "workloads running now",
  usage: `Usage: pair jobs [--config FILE] [--json]

Lists the workloads running now: id, model, origin node, serving node, engine, status, start,
first-byte latency, duration so far, tokens in/out and estimated cost. Prompts and completions are
never stored or shown. --json prints the fields of docs/reference.md (id, model, origin_node,
serving_node, sponsor, off_lan, status, started_at, first_byte_ms, duration_ms, tokens_in,
tokens_out, est_cost_usd, requester, …).

${COMMON_HELP}`,
  async run(args, io) {
    const flags = parseCommandArgs(args, COMMON_OPTIONS);
    const jobs = asWorkloads(await ask(io, flags.config, "/pair/v1/jobs"), "jobs");
    if (flags.json === true) printJson(io, jobs);
    else if (jobs.length === 0) printLines(io, ["no workloads running (finished ones: pair history)"]);
    else printLines(io, workloadLines(jobs, io.nowMs()));
    return EXIT_OK;
  },
};

export const historyCommand: Command = {
  name: "history",
  summary: "finished workloads, newest first",
  usage: `Usage: pair history [--since T] [--limit N] [--config FILE] [--json]

Lists finished workloads, newest first, with the columns of pair jobs.

  --since T      only workloads started at or after T: an ISO date/time (2025-06-01,
                 2025-06-01T14:00 in local time, 2025-06-01T14:00:00Z) or a duration back from
                 now (90s, 15m, 2h, 1d, 1w, 1h30m)
  --limit N      at most N workloads (1 to ${MAX_HISTORY_LIMIT}; default 1000)

${COMMON_HELP}

Examples:
  pair history --since 15m
  pair history --since 2025-06-01 --json | jq '.[] | select(.status != "completed")'`,
  async run(args, io) {
    const flags = parseCommandArgs(args, {
      ...COMMON_OPTIONS,
      since: { type: "string" },
      limit: { type: "string" },
    });
    const query = new URLSearchParams();
    if (flags.since !== undefined) {
      const since = parseSince(flags.since, io.nowMs());
      if (!since.ok) throw new UsageError(`--since: ${since.message}`);
      query.set("since", since.iso);
    }
    if (flags.limit !== undefined)
      query.set("limit", String(intFlag("--limit", flags.limit, 1, MAX_HISTORY_LIMIT)));
    const search = query.toString() === "" ? "" : `?${query.toString()}`;
    const history = asWorkloads(await ask(io, flags.config, `/pair/v1/history${search}`), "history");
    if (flags.json === true) printJson(io, history);
    else if (history.length === 0)
      printLines(io, [
        flags.since === undefined ? "no finished workloads yet" : `no workloads since ${flags.since}`,
      ]);
    else printLines(io, workloadLines(history, io.nowMs()));
    return EXIT_OK;
  },
};
