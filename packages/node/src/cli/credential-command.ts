/**
 * `pair credential set NAME | delete NAME | list`: the secrets PAIR uses (a rented node's provider
 * token), kept in the OS credential store. NAME is `SERVICE/ACCOUNT`, or `ACCOUNT` for service
 * `pair`; config refers to it as `os-credential-store:SERVICE/ACCOUNT`. `set` reads the secret from
 * stdin (or a prompt that does not echo); no output, JSON or message ever holds it. The commands need
 * no config and no running node.
 * Must not know: which platform store is behind the port, what the secrets are for.
 */

import type { CredentialRef, PairConfig } from "../config/index.js";
import { CREDENTIAL_PREFIX, formatCredentialRef, loadConfig, parseCredentialRef } from "../config/index.js";
import { Redacted } from "@pair/cluster";
import {
  CredentialError,
  MAX_SECRET_BYTES,
  OsCredentialStore,
  type CredentialStore,
} from "../credentials/index.js";
import { CliFailure, EXIT_OK, UsageError } from "./cli-errors.js";
import type { CliIo } from "./cli-io.js";
import type { Command } from "./command.js";
import { CONFIG_OPTION, HELP_OPTION, JSON_OPTION, parseCommandWords, runSubcommand } from "./command-args.js";
import { readSecret } from "./secret-input.js";

const OPTIONS = { ...CONFIG_OPTION, ...JSON_OPTION, ...HELP_OPTION } as const;

const USAGE = `Usage: pair credential set NAME [--config FILE] [--json]
       pair credential delete NAME [--config FILE] [--json]
       pair credential list [--config FILE] [--json]

The secrets PAIR uses (a rented node's provider token) live in the OS credential store: the Secret
Service (GNOME Keyring, KWallet, KeePassXC) on Linux, the Keychain on macOS, Credential Manager on
Windows — never in the config file or the data dir. NAME is SERVICE/ACCOUNT, or ACCOUNT alone for
service "pair"; config refers to it as os-credential-store:SERVICE/ACCOUNT, so after
"pair credential set hf" a rented node says "credential: os-credential-store:pair/hf".

  set NAME     store a secret under NAME, replacing one already there. The secret is read from
               stdin — piped: printf %s "$HF_TOKEN" | pair credential set hf — or, on a terminal,
               typed at a prompt that does not echo. One trailing newline is dropped; an empty
               secret or one holding a line break is refused. --json prints {"credential"}.
  delete NAME  remove it (exit 1 when there is none). --json prints {"credential", "deleted"}.
  list         the names PAIR stored — never a secret. --json prints
               [{"credential", "service", "account"}]. With --config, also what the config
               refers to: each entry gains "stored" and "used_by" (the rented nodes naming it),
               and a name the config refers to but the store lacks is listed with stored: false.

Options:
  --config FILE  a node's config (set and delete do not need one)
  --json         print JSON for scripts
  -h, --help     show this help

A missing or locked store fails with credential_unavailable and says what to do. On a machine
without a desktop, run pair inside a session bus with an unlocked gnome-keyring (README, Credentials).`;

/** Which store the commands use; tests of the command line run against the real one. */
function openStore(): CredentialStore {
  return new OsCredentialStore();
}

function printJson(io: CliIo, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

/** NAME (`SERVICE/ACCOUNT`, `ACCOUNT`, or the whole `os-credential-store:…` reference). */
function nameWord(word: string): CredentialRef {
  const parsed = parseCredentialRef(
    word.startsWith(CREDENTIAL_PREFIX) ? word : `${CREDENTIAL_PREFIX}${word}`,
  );
  if (parsed.ok) return parsed.ref;
  throw new UsageError(
    parsed.code === "literal_credential"
      ? `NAME: ${parsed.message}`
      : "NAME: expected SERVICE/ACCOUNT or ACCOUNT, each 1-128 letters, digits or . _ @ + - " +
          "(starting with a letter or digit)",
  );
}

/** The flags and NAME. A second word is refused without repeating it: it may be a pasted secret. */
function nameArgs(args: readonly string[]) {
  try {
    const { values, words } = parseCommandWords(args, OPTIONS, ["NAME"]);
    return { json: values.json === true, ref: nameWord(words[0] ?? "") };
  } catch (error) {
    if (error instanceof UsageError && error.message.startsWith("Unexpected argument"))
      throw new UsageError("expected one NAME; the secret is read from stdin, never from the command line");
    throw error;
  }
}

/** A store failure as a failure (exit 1); its message already says what to do. */
async function storeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof CredentialError) throw new CliFailure(error.message, { cause: error });
    throw error;
  }
}

async function set(args: readonly string[], io: CliIo): Promise<number> {
  const { json, ref } = nameArgs(args);
  const name = formatCredentialRef(ref);
  const secret = await readSecret(io.stdin(), {
    prompt: `Secret for ${name} (typing is hidden): `,
    write: io.stderr,
    maxBytes: MAX_SECRET_BYTES,
  });
  await storeCall(() =>
    openStore().set(ref, new Redacted(secret, `credential ${ref.service}/${ref.account}`)),
  );
  if (json) printJson(io, { credential: name });
  else
    io.stdout(`Stored ${name} in the OS credential store. Config refers to it as:\n  credential: ${name}\n`);
  return EXIT_OK;
}

async function remove(args: readonly string[], io: CliIo): Promise<number> {
  const { json, ref } = nameArgs(args);
  const name = formatCredentialRef(ref);
  const deleted = await storeCall(() => openStore().delete(ref));
  if (!deleted)
    throw new CliFailure(
      `no credential ${name} is stored (pair credential list shows the names PAIR stored)`,
    );
  if (json) printJson(io, { credential: name, deleted: true });
  else io.stdout(`Deleted ${name} from the OS credential store.\n`);
  return EXIT_OK;
}

/** Every credential reference in `value`, found by shape (config values are plain frozen data). */
function refsIn(value: unknown, found: CredentialRef[] = []): CredentialRef[] {
  if (typeof value !== "object" || value === null) return found;
  const keys = Object.keys(value);
  const record = value as Record<string, unknown>;
  if (keys.length === 2 && typeof record["service"] === "string" && typeof record["account"] === "string")
    found.push({ service: record["service"], account: record["account"] });
  else for (const key of keys) refsIn(record[key], found);
  return found;
}

/** Which credential names the config refers to, and who refers to each. */
function usesOf(config: PairConfig): Map<string, string[]> {
  const uses = new Map<string, string[]>();
  const note = (ref: CredentialRef, by: string) => {
    const name = formatCredentialRef(ref);
    const list = uses.get(name) ?? [];
    if (!list.includes(by)) list.push(by);
    uses.set(name, list);
  };
  for (const node of config.rentedNodes)
    for (const ref of refsIn(node)) note(ref, `rented node ${node.name}`);
  const { rentedNodes: _rented, ...rest } = config;
  for (const ref of refsIn(rest)) note(ref, "config");
  return uses;
}

async function list(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandWords(args, OPTIONS, []);
  const refs = await storeCall(() => openStore().list());
  if (values.config !== undefined) return listAgainstConfig(io, values.config, values.json === true, refs);
  if (values.json === true)
    printJson(
      io,
      refs.map((r) => ({ credential: formatCredentialRef(r), service: r.service, account: r.account })),
    );
  else if (refs.length === 0)
    io.stdout("no credentials stored by PAIR yet (pair credential set NAME stores one)\n");
  else io.stdout(refs.map((r) => `${formatCredentialRef(r)}\n`).join(""));
  return EXIT_OK;
}

/** `list --config FILE`: the stored names beside the ones the config refers to. */
async function listAgainstConfig(
  io: CliIo,
  file: string,
  json: boolean,
  stored: readonly CredentialRef[],
): Promise<number> {
  const loaded = await loadConfig({ file, env: io.env, homeDir: io.homeDir, hostName: io.hostName });
  const uses = usesOf(loaded.config);
  const rows = stored.map((r) => ({ ref: r, stored: true }));
  for (const name of uses.keys())
    if (!rows.some((row) => formatCredentialRef(row.ref) === name)) {
      const parsed = parseCredentialRef(name);
      if (parsed.ok) rows.push({ ref: parsed.ref, stored: false });
    }
  const entries = rows.map(({ ref, stored: isStored }) => ({
    credential: formatCredentialRef(ref),
    service: ref.service,
    account: ref.account,
    stored: isStored,
    used_by: uses.get(formatCredentialRef(ref)) ?? [],
  }));
  if (json) printJson(io, entries);
  else if (entries.length === 0) io.stdout("no credentials stored, and the config refers to none\n");
  else
    io.stdout(
      entries
        .map(
          (e) =>
            `${e.credential}  ${e.stored ? "stored" : "MISSING: pair credential set " + e.credential.slice(CREDENTIAL_PREFIX.length)}` +
            (e.used_by.length > 0 ? `  (used by ${e.used_by.join(", ")})` : "") +
            "\n",
        )
        .join(""),
    );
  return EXIT_OK;
}

export const credentialCommand: Command = {
  name: "credential",
  summary: "secrets in the OS credential store: set NAME (from stdin), delete NAME, list",
  usage: USAGE,
  async run(args, io) {
    return runSubcommand(args, io, { set, delete: remove, list });
  },
};
