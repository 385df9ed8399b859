/**
 * A real `pair serve` child process for the crash tests, whatever provider it sponsors: a throwaway
 * data dir, the test CA trusted through `tls.extra_ca_file`, the provider's secrets in the real OS
 * credential store, a config file whose rented-node and provider lines the caller writes, and the
 * scaled virtual wall clock (the `scaled-clock.mjs` preload: SCALE times real time from `originMs`,
 * the same time as the emulator started with that origin and scale). The child can be SIGKILLed,
 * SIGTERMed and started again on the same data dir; its SQLite stores are read from here.
 * Must not know: which provider or emulator it talks to, what a test asserts.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { spendOf, type NodeSpend } from "@pair/ledger";
import type { HostingState } from "@pair/provision";
import { SqliteHostingStore, SqliteLedgerStore } from "@pair/store";
import type { TestCa } from "@pair/testkit";
import { Redacted } from "@pair/cluster";
import type { CredentialRef } from "../../src/config/index.js";
import { OsCredentialStore } from "../../src/credentials/index.js";
import { uniqueName } from "../credentials/secret-service.js";
import { freePort } from "../support/serve-child.js";
import { untilValue } from "../support/eventually.js";

const PAIR_BIN = fileURLToPath(new URL("../../../../bin/pair.js", import.meta.url));
export { freePort } from "../support/serve-child.js";

const CLOCK_PRELOAD = fileURLToPath(new URL("./scaled-clock.mjs", import.meta.url));

/** Virtual ms per real ms: a billed minute is 3 s; the child's 10 s pass is 200 virtual s. */
export const SCALE = 20;
export const MIN = 60_000;

/** Polls `check` every 25 ms until it gives a value, or throws after `withinMs` real ms, naming `what`. */
export const until = <T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  withinMs: number,
): Promise<T> => untilValue(check, withinMs, { what, pollMs: 25 });

/**
 * Starts the child and SIGKILLs it 0, 300 and 900 ms after its port answered — during start-up
 * adoption and reconciliation — calling `afterKill` after each kill.
 */
export async function killDuringStartUp(child: SponsorProcess, afterKill: () => void): Promise<void> {
  for (const delayMs of [0, 300, 900]) {
    await child.start();
    await new Promise((r) => setTimeout(r, delayMs));
    await child.kill();
    afterKill();
  }
}

export interface SponsorProcessSetup {
  /** The configured managed node: what `hosting()` and `spend()` read by default. */
  readonly node: string;
  /** Secrets stored in the OS credential store, by a name the config lines use (value: the secret). */
  readonly secrets: Readonly<Record<string, string>>;
  /** The virtual clock's origin (real epoch ms when the emulator started). */
  readonly originMs: number;
  /** The YAML after `engines: []`: `rented_nodes:` and `providers:`, given each secret's reference. */
  readonly configLines: (refs: Readonly<Record<string, string>>) => readonly string[];
  /** The emulator's now (epoch ms): the ledger is read at it. */
  readonly nowMs: () => number;
  /** Closes what the caller started (its emulator and clients), at cleanup. */
  readonly close: () => Promise<void>;
}

export interface SponsorProcess {
  readonly dataDir: string;
  readonly url: string;
  /** Everything the children wrote on stdout and stderr, across restarts. */
  output: string;
  readonly process: ChildProcess | undefined;
  /** Start `pair serve` (again) on the same data dir; resolves once it answers on its port. */
  start(): Promise<void>;
  /** SIGKILL, and wait for the exit. */
  kill(): Promise<void>;
  /** Send SIGTERM (a graceful stop: pause or terminate at exit) without waiting. */
  term(): void;
  /** Resolves with the exit code once the child exited. */
  exited(): Promise<number | null>;
  adminToken(): string;
  /** Each secret's credential reference (`os-credential-store:service/account`), by its setup name. */
  readonly credentialRefs: Readonly<Record<string, string>>;
  /** Files of the dir and lines of the children's output that hold any of the secrets (should be none). */
  tokenLeaks(): string[];
  /** GET an admin path with the admin token. */
  admin(path: string): Promise<unknown>;
  /** A managed node's hosting store (default the configured one), read from SQLite (the child may be running or dead). */
  hosting(node?: string): HostingState;
  /** A managed node's ledger spend (default the configured one), read from SQLite at the emulator's now. */
  spend(node?: string): NodeSpend | undefined;
  cleanup(): Promise<void>;
}

export async function sponsorProcess(ca: TestCa, setup: SponsorProcessSetup): Promise<SponsorProcess> {
  const dir = mkdtempSync(join(tmpdir(), "pair-crash-"));
  const dataDir = join(dir, "data");
  const caFile = join(dir, "test-ca.pem");
  writeFileSync(caFile, ca.certPem);
  const store = new OsCredentialStore({ callTimeoutMs: 10_000 });
  const stored: CredentialRef[] = [];
  const refs: Record<string, string> = {};
  for (const [name, value] of Object.entries(setup.secrets)) {
    const credential: CredentialRef = { service: "pair", account: uniqueName(`crash-${name}`) };
    await store.set(credential, new Redacted(value, `test ${name}`));
    stored.push(credential);
    refs[name] = `os-credential-store:${credential.service}/${credential.account}`;
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const configFile = join(dir, "pair.yaml");
  writeFileSync(
    configFile,
    [
      "node:",
      "  name: sponsor",
      `  data_dir: ${dataDir}`,
      `  listen: 127.0.0.1:${port}`,
      `  cluster_listen: 127.0.0.1:${await freePort()}`,
      "  discovery: { mdns: false }",
      "engines: []",
      ...setup.configLines(refs),
      "tls:",
      `  extra_ca_file: ${caFile}`,
      "",
    ].join("\n"),
  );
  const secrets = Object.values(setup.secrets);

  let child: ChildProcess | undefined;
  let exit: Promise<number | null> = Promise.resolve(null);
  const world: SponsorProcess = {
    dataDir,
    url,
    output: "",
    get process() {
      return child;
    },
    async start() {
      const started = spawn(
        process.execPath,
        ["--import", CLOCK_PRELOAD, PAIR_BIN, "serve", "--config", configFile],
        {
          stdio: ["ignore", "pipe", "pipe"],
          env: {
            ...process.env,
            PAIR_TEST_TIME_SCALE: String(SCALE),
            PAIR_TEST_TIME_ORIGIN_MS: String(setup.originMs),
          },
        },
      );
      child = started;
      exit = new Promise((resolve) => started.once("exit", (code) => resolve(code)));
      started.stdout?.on("data", (d: Buffer) => (world.output += d.toString()));
      started.stderr?.on("data", (d: Buffer) => (world.output += d.toString()));
      await until("pair serve answers", async () => (await fetch(`${url}/`)).status === 200, 30_000).catch(
        (e: unknown) => {
          throw new Error(`${String(e)}\n${world.output}`);
        },
      );
    },
    async kill() {
      if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGKILL");
      await exit;
    },
    term() {
      child?.kill("SIGTERM");
    },
    exited: () => exit,
    adminToken: () => readFileSync(join(dataDir, "admin.token"), "utf8").trim(),
    credentialRefs: refs,
    tokenLeaks() {
      const holds = (text: string | Buffer) => secrets.some((s) => text.includes(s));
      const files = readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => join(e.parentPath, e.name))
        .filter((f) => holds(readFileSync(f)));
      const lines = world.output.split("\n").filter(holds);
      return [...files, ...lines];
    },
    async admin(path) {
      const res = await fetch(`${url}${path}`, {
        headers: { authorization: `Bearer ${world.adminToken()}` },
      });
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
      return res.json();
    },
    hosting(node = setup.node) {
      const hosting = new SqliteHostingStore({ path: join(dataDir, "managed", `${node}.db`) });
      try {
        return hosting.load();
      } finally {
        hosting.close();
      }
    },
    spend(node = setup.node) {
      const ledger = new SqliteLedgerStore({ path: join(dataDir, "managed", "ledger.db") });
      try {
        const state = ledger.load();
        return state === undefined ? undefined : spendOf(state, node, setup.nowMs());
      } finally {
        ledger.close();
      }
    },
    async cleanup() {
      await world.kill();
      await setup.close();
      for (const credential of stored) await store.delete(credential).catch(() => false);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return world;
}
