/**
 * `pair apikey create ID | list | revoke ID`: the API keys of the configured node, kept hashed in
 * its data dir. The commands edit the store directly (under a lock), so they work whether or not
 * the node runs — a node that will listen beyond loopback needs its first key before it starts — and
 * a running node sees each change on its next request. The key is printed once, by `create`, on
 * stdout only; nothing else ever shows it.
 * Must not know: how keys are stored or checked (auth/), how the node uses them.
 */

import { randomBytes } from "node:crypto";
import { HOLDING_RUNTIME } from "@pair/cluster";
import {
  apiKeyIdProblem,
  ApiKeyError,
  createApiKey,
  listApiKeys,
  revokeApiKey,
  type ApiKeyStoreDeps,
} from "../auth/index.js";
import { formatHostPort, isLoopbackHost, loadConfig, type LoadedConfig } from "../config/index.js";
import { CliFailure, EXIT_OK, UsageError } from "./cli-errors.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./print-json.js";
import type { Command } from "./command.js";
import { CONFIG_OPTION, HELP_OPTION, JSON_OPTION, parseCommandWords, runSubcommand } from "./command-args.js";
import { renderTable } from "./text-table.js";

const OPTIONS = { ...CONFIG_OPTION, ...JSON_OPTION, ...HELP_OPTION } as const;

const USAGE = `Usage: pair apikey create ID [--config FILE] [--json]
       pair apikey list [--config FILE] [--json]
       pair apikey revoke ID [--config FILE] [--json]

API keys let callers on other machines use this node's client API (OpenAI and Ollama routes,
/metrics) when node.listen is beyond loopback; callers on this machine need none. The node keeps
only a hash of each key, in <data_dir>/api-keys.json. Changes count for a running node from its
next request; no restart.

  create ID   make a key named ID and print it — once: it cannot be shown again. ID (1 to 63
              letters, digits, ".", "_", "-") becomes the requester of the workloads made with
              the key (pair history). --json prints {"id", "key", "created_at"}.
  list        every key: id, created, revoked — never a key or a hash. --json prints
              [{"id", "created_at", "revoked_at", "active"}].
  revoke ID   refuse the key from the next request on. The record stays and the id stays
              taken. --json prints {"id", "revoked_at"}.

Options:
  --config FILE  the node's config (else $PAIR_CONFIG, else the default file (README)): its
                 node.data_dir holds the keys
  --json         print JSON for scripts
  -h, --help     show this help

Clients send the key as "Authorization: Bearer <key>", e.g.
  OpenAI(base_url="http://NODE:11434/v1", api_key="<key>")
  curl -H "Authorization: Bearer $PAIR_KEY" http://NODE:11434/api/tags`;

function storeDeps(io: CliIo): ApiKeyStoreDeps {
  // Holding timers: the lock retry is the only thing this command waits on.
  const clock = { now: () => ({ wallMs: io.nowMs(), monoMs: HOLDING_RUNTIME.clock.now().monoMs }) };
  return { runtime: { clock, timers: HOLDING_RUNTIME.timers }, randomBytes: (size) => randomBytes(size) };
}

function load(io: CliIo, file: string | undefined): Promise<LoadedConfig> {
  return loadConfig({ file, env: io.env, homeDir: io.homeDir, hostName: io.hostName });
}

/** A store refusal as a failure (exit 1); its message already says what to do. */
async function storeCall<T>(dataDir: string, call: () => Promise<T> | T): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ApiKeyError) throw new CliFailure(error.message, { cause: error });
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EACCES" || code === "EPERM" || code === "EROFS" || code === "ENOTDIR")
      throw new CliFailure(
        `cannot use the data dir ${dataDir} (${(error as Error).message}) — run this as the user the node ` +
          "runs as, or set node.data_dir in the config",
        { cause: error },
      );
    throw error;
  }
}

function idWord(word: string): string {
  const problem = apiKeyIdProblem(word);
  if (problem !== undefined) throw new UsageError(`ID: ${problem}`);
  return word;
}

async function create(args: readonly string[], io: CliIo): Promise<number> {
  const { values, words } = parseCommandWords(args, OPTIONS, ["ID"]);
  const id = idWord(words[0] ?? "");
  const loaded = await load(io, values.config);
  const { dataDir } = loaded.config.node;
  const created = await storeCall(dataDir, () => createApiKey(dataDir, id, storeDeps(io)));
  if (values.json === true) {
    printJson(io, created);
    return EXIT_OK;
  }
  const { listen } = loaded.config.node;
  io.stdout(
    [
      `API key "${id}" created. It is shown only now: store it where the client keeps secrets.`,
      "",
      `  ${created.key}`,
      "",
      `Clients send it as "Authorization: Bearer <key>"; workloads made with it show requester "${id}".`,
      ...(isLoopbackHost(listen.host)
        ? [
            `This node listens on ${formatHostPort(listen)}, which only this machine reaches: set node.listen ` +
              "(e.g. 0.0.0.0:11434) for other machines to use the key.",
          ]
        : []),
      "",
    ].join("\n"),
  );
  return EXIT_OK;
}

async function list(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandWords(args, OPTIONS, []);
  const loaded = await load(io, values.config);
  const { dataDir } = loaded.config.node;
  const keys = await storeCall(dataDir, () => listApiKeys(dataDir));
  if (values.json === true) printJson(io, keys);
  else if (keys.length === 0) io.stdout("no API keys yet (pair apikey create ID makes one)\n");
  else
    io.stdout(
      renderTable(
        [{ header: "ID" }, { header: "STATE" }, { header: "CREATED" }, { header: "REVOKED" }],
        keys.map((k) => [k.id, k.active ? "active" : "revoked", k.created_at, k.revoked_at ?? "-"]),
      )
        .map((line) => `${line}\n`)
        .join(""),
    );
  return EXIT_OK;
}

async function revoke(args: readonly string[], io: CliIo): Promise<number> {
  const { values, words } = parseCommandWords(args, OPTIONS, ["ID"]);
  const id = idWord(words[0] ?? "");
  const loaded = await load(io, values.config);
  const { dataDir } = loaded.config.node;
  const revoked = await storeCall(dataDir, () => revokeApiKey(dataDir, id, storeDeps(io)));
  if (values.json === true) printJson(io, { id: revoked.id, revoked_at: revoked.revoked_at });
  else
    io.stdout(
      revoked.already
        ? `API key "${id}" was already revoked (${revoked.revoked_at}).\n`
        : `API key "${id}" revoked: the node refuses it from its next request on.\n`,
    );
  return EXIT_OK;
}

export const apikeyCommand: Command = {
  name: "apikey",
  summary: "API keys for callers on other machines: create ID, list, revoke ID",
  usage: USAGE,
  async run(args, io) {
    return runSubcommand(args, io, { create, list, revoke });
  },
};
