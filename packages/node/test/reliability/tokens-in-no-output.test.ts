// No secret in any output. A real `pair serve` child sponsors a managed Hugging Face endpoint whose
// token sits in the real OS credential store (sponsor-child.ts); at run time the test adds an API
// key (`pair apikey create`) and a second stored credential (`pair credential set`, the secret on
// stdin), and reads the admin token from the data dir. Then every `pair` command line that takes
// `--json` — enumerated from the usage text of every command in COMMANDS, so a new one fails the
// coverage check until it is added below — runs against the live node and again against the node
// dead, and the crash output is collected: the node SIGABRTed, the node dying of an uncaught error,
// and the CLI's own "unexpected error" path. Neither the provider token, the admin token, the API
// key nor the other stored secret appears in any stdout or stderr (both the CliIo streams and
// anything written to the process's own), in any `--json` output, in the node's output, or in a
// file of its data dir. The one exception is by design: `pair apikey create` prints its own new
// key once.
// Needs the OS credential store: run through `bash scripts/test.sh`.
import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { format } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/cli-io.js";
import { COMMANDS, main } from "../../src/cli/main.js";
import { parseCredentialRef } from "../../src/config/index.js";
import { OsCredentialStore } from "../../src/credentials/index.js";
import { freePort, manualSignals } from "../cli/cli-harness.js";
import { uniqueName } from "../credentials/secret-service.js";
import { keyringCa } from "../support/keyring-worlds.js";
import { NODE, SPEC, sponsorChild, until, type SponsorChild } from "./sponsor-child.js";

/** One command line to run: its synopsis key, the words after `pair`, and whether it takes --config. */
interface Run {
  readonly key: string;
  readonly argv: readonly string[];
  readonly config?: false;
  /** Text for stdin (the secret of `pair credential set`). */
  readonly stdin?: string;
  /** Runs as a sandbox of its own (`pair demo --basic`), stopped after its JSON line. */
  readonly sandbox?: true;
  /** Exits 1 when something it checks is wrong (`pair doctor`): only its output is judged. */
  readonly mayFail?: true;
}

/** What the command lines need: the stored credentials, the second secret, a dead address. */
interface RunContext {
  readonly hfRef: string;
  readonly other: string;
  readonly otherSecret: string;
  readonly nowhere: string;
}

interface Outcome {
  readonly argv: readonly string[];
  readonly code: number;
  readonly out: string;
}

/**
 * The `--json` synopses of every command, from its usage text: the words of each `pair …` line
 * before its first `[`, without the UPPERCASE placeholders (`rented pause|resume`, `join --pin`).
 */
function jsonSynopses(): string[] {
  const keys: string[] = [];
  for (const command of COMMANDS) {
    const synopsis = command.usage.split("\n\n")[0] ?? "";
    const lines = synopsis.replace(/^Usage:/, "").split("\n");
    const joined: string[] = [];
    for (const line of lines)
      if (line.trim().startsWith("pair ")) joined.push(line.trim());
      else if (joined.length > 0) joined[joined.length - 1] += ` ${line.trim()}`;
    for (const line of joined) {
      if (!line.includes("--json")) continue;
      const words: string[] = [];
      for (const word of line.split(/\s+/).slice(1)) {
        if (word.startsWith("[") || word.startsWith("(")) break;
        if (/^[A-Z][A-Z0-9_/|]*$/.test(word)) continue;
        words.push(word);
      }
      keys.push(words.join(" "));
    }
  }
  return keys.sort();
}

/** Synopses not run here, each with the reason (a decision, not an omission). */
const NOT_RUN: Readonly<Record<string, string>> = {
  demo:
    "the two-node tour sandbox (about 20 s) never reads --config, the admin token or the OS " +
    "credential store: its token is generated in memory; `demo --basic` below runs the same code " +
    "path for its JSON line",
  "service install":
    "writes the user's real service file (run here, it could replace one of the user's own); it " +
    "prints paths, a command line and the OS's answer, and reads the config but no credential: " +
    "service.test.ts runs it against a throwaway XDG_CONFIG_HOME",
  "service status": "as service install: paths and the OS's answer only (service.test.ts)",
  "service uninstall": "as service install: it removes the user's real service file (service.test.ts)",
  serve:
    "the node itself, not a one-shot command: --json only changes how its log lines are written " +
    "(event-log.ts); what the node writes is the sponsor child's output, scanned below after a " +
    "SIGABRT and after an uncaught error",
};

const keyring = keyringCa();
let w: SponsorChild | undefined;
const credentials: { service: string; account: string }[] = [];
const store = new OsCredentialStore({ callTimeoutMs: 10_000 });

afterAll(async () => {
  delete process.env["NODE_OPTIONS"];
  await w?.cleanup();
  for (const ref of credentials) await store.delete(ref).catch(() => false);
});

/**
 * Runs `pair argv` in-process. Its output is everything written to the CliIo streams and anything
 * written meanwhile to the process's own stdout or stderr or through `console` (a stray
 * console.log: vitest sends those past process.stdout, so both are caught).
 */
async function pair(argv: readonly string[], io: Partial<CliIo> = {}, stdin = ""): Promise<Outcome> {
  let out = "";
  const writes = [process.stdout, process.stderr].map((stream) => {
    const original = stream.write.bind(stream);
    stream.write = (chunk: string | Uint8Array, ...rest: never[]) => {
      out += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString();
      return original(chunk, ...rest);
    };
    return () => void (stream.write = original);
  });
  for (const method of CONSOLE_METHODS) {
    const original = Object.getOwnPropertyDescriptor(console, method)!;
    console[method] = (...args: unknown[]) => void (out += `${format(...args)}\n`);
    writes.push(() => void Object.defineProperty(console, method, original));
  }
  try {
    const code = await main(argv, {
      stdin: () => Readable.from(stdin === "" ? [] : [stdin]),
      stdout: (t) => void (out += t),
      stderr: (t) => void (out += t),
      env: { ...process.env, PAIR_CONFIG: undefined },
      homeDir: join(tmpdir(), "pair-token-test-home-that-does-not-exist"),
      hostName: "test-host",
      signals: manualSignals(),
      ...io,
    });
    return { argv, code, out };
  } finally {
    for (const restore of writes) restore();
  }
}

const CONSOLE_METHODS = ["log", "error", "warn", "info", "debug", "trace"] as const;

/** Where each secret shows up in `outcomes` (should be nowhere). */
function leaks(secrets: Readonly<Record<string, string>>, outcomes: readonly Outcome[]): string[] {
  const found: string[] = [];
  for (const o of outcomes)
    for (const [name, secret] of Object.entries(secrets))
      if (o.out.includes(secret)) found.push(`${name} in the output of pair ${o.argv.join(" ")}`);
  return found;
}

describe("no secret in any output", () => {
  it("enumerates every --json command line, and each one is run below or excluded with a reason", () => {
    const context = { hfRef: "pair/x", other: "y", otherSecret: "z", nowhere: "127.0.0.1:1" };
    const covered = [...runs(context).map((r) => r.key), ...Object.keys(NOT_RUN)];
    expect(jsonSynopses()).toEqual([...new Set(covered)].sort());
  });

  it("every --json command, live and dead node, and crash output: no provider token, admin token, API key or stored secret", async () => {
    w = await sponsorChild(keyring.ca, ["    lifecycle: { idle_pause_min: 60 }"]);
    await w.api.createEndpoint("alice", SPEC);
    const configFile = join(dirname(w.dataDir), "pair.yaml");
    // The catalog too on the emulator (`pair rented catalog` would otherwise go to huggingface.co).
    const yaml = readFileSync(configFile, "utf8");
    const hub = `hub_api: ${w.hf.hubApiUrl} }`;
    expect(yaml).toContain(hub);
    writeFileSync(
      configFile,
      yaml.replace(hub, `hub_api: ${w.hf.hubApiUrl}, catalog_api: ${w.hf.catalogApiUrl} }`),
    );
    await w.start();
    const hfRefText = /credential: (os-credential-store:\S+)/.exec(readFileSync(configFile, "utf8"))?.[1];
    const hfRef = hfRefText === undefined ? undefined : parseCredentialRef(hfRefText);
    if (hfRef === undefined || !hfRef.ok) throw new Error("no credential in the sponsor's config");
    credentials.push(hfRef.ref);
    const hfToken = (await store.get(hfRef.ref))?.reveal();
    expect(hfToken).toMatch(/^hf_/);

    // An API key and a second stored secret, made now.
    const created = await pair(["apikey", "create", "ci-bot", "--config", configFile, "--json"]);
    expect(created.code, created.out).toBe(0);
    const apiKey = (JSON.parse(created.out) as { key: string }).key;
    expect(apiKey).toMatch(/^pair_ci-bot_[\w-]{43}$/);
    const otherAccount = uniqueName("other");
    credentials.push({ service: "pair", account: otherAccount });
    const otherSecret = `sk-${uniqueName("secret")}-${Math.random().toString(36).slice(2)}`;
    const secrets = {
      "the HF token": hfToken!,
      "the admin token": w.adminToken(),
      "the API key": apiKey,
      // `pair_<ID>_<secret>`; the secret is base64url, which may itself hold a `_`.
      "the API key's secret": apiKey.slice("pair_ci-bot_".length),
      "the other stored secret": otherSecret,
    };

    const all = runs({
      hfRef: hfRefText!,
      other: otherAccount,
      otherSecret,
      nowhere: `127.0.0.1:${await freePort()}`,
    });
    const run = (r: Run): Promise<Outcome> =>
      r.sandbox === true
        ? demoBasic()
        : pair(
            [...r.argv, ...(r.config === false ? [] : ["--config", configFile]), "--json"],
            {},
            r.stdin ?? "",
          );

    // Live: every --json command line against the running node.
    const live: Outcome[] = [];
    for (const r of all) live.push(await run(r));
    // Every one ran to success except the refusals made on purpose (a dead join address, names that
    // do not exist): those print their error path, which is checked too.
    const failed = all.filter((r, n) => live[n]!.code !== 0 && r.mayFail !== true).map((r) => r.key);
    const said = live.map((o) => `${o.code} pair ${o.argv.join(" ")}\n${o.out}`).join("\n");
    expect(failed, said).toEqual(["join --pin", "unpair", "rented delete"]);
    expect(leaks(secrets, live)).toEqual([]);
    // `pair apikey create` printed its own new key once, and no other secret.
    const second = live.find((o) => o.argv[1] === "create" && o.argv[0] === "apikey");
    expect(second?.code).toBe(0);
    expect(second?.out).toMatch(/"key": "pair_second_[\w-]{43}"/);

    // The node SIGABRTed: its output and its data dir hold none of them.
    const aborted = w.process!;
    const exited = new Promise<string | null>((resolve) =>
      aborted.once("exit", (_c, signal) => resolve(signal)),
    );
    aborted.kill("SIGABRT");
    expect(await exited).toBe("SIGABRT");
    expect(leaks(secrets, [{ argv: ["serve (SIGABRT)"], code: 0, out: w.output }])).toEqual([]);
    expect(w.tokenLeaks()).toEqual([]);

    // Dead node: every command line again; each fails or answers locally, never with a secret.
    const dead: Outcome[] = [];
    for (const r of all) if (r.sandbox !== true) dead.push(await run(r));
    // The commands that ask the node fail, saying it is not reachable.
    const status = dead.find((o) => o.argv[0] === "status");
    expect(status?.code).toBe(1);
    expect(leaks(secrets, dead)).toEqual([]);

    // The node dying of an uncaught error (a preload throws one on SIGUSR2): Node prints the stack.
    const preload = join(dirname(w.dataDir), "crash-preload.mjs");
    writeFileSync(
      preload,
      'process.on("SIGUSR2", () => setImmediate(() => { throw new Error("forced crash for the token test"); }));\n',
    );
    process.env["NODE_OPTIONS"] = `--import ${preload}`;
    try {
      await w.start();
    } finally {
      delete process.env["NODE_OPTIONS"];
    }
    const crashing = w.process!;
    const crashed = new Promise<number | null>((resolve) => crashing.once("exit", (code) => resolve(code)));
    const before = w.output.length;
    crashing.kill("SIGUSR2");
    expect(await crashed).not.toBe(0);
    await until("the crash is printed", () => w!.output.slice(before).includes("forced crash"), 5_000);
    expect(leaks(secrets, [{ argv: ["serve (uncaught error)"], code: 1, out: w.output }])).toEqual([]);
    expect(w.tokenLeaks()).toEqual([]);

    // The CLI's own crash path: an unexpected error prints its stack ("a bug in PAIR"). A command
    // that answers without the node (it reads the credential store) meets a stdout that throws.
    const bug = await pair(["credential", "list", "--json"], {
      stdout: () => {
        throw new TypeError("forced CLI crash");
      },
    });
    expect(bug.code).toBe(1);
    expect(bug.out).toMatch(/unexpected error \(a bug in PAIR[\s\S]*TypeError: forced CLI crash\n\s+at /);
    expect(leaks(secrets, [bug])).toEqual([]);
  }, 120_000);
});

/** `pair demo --basic --json` up to its JSON line, then stopped. */
async function demoBasic(): Promise<Outcome> {
  const signals = manualSignals();
  let out = "";
  const done = main(["demo", "--basic", "--port", "0", "--json"], {
    stdin: () => Readable.from([]),
    stdout: (t) => void (out += t),
    stderr: (t) => void (out += t),
    env: {},
    homeDir: join(tmpdir(), "pair-token-test-home-that-does-not-exist"),
    hostName: "test-host",
    signals,
  });
  await until("the demo's JSON line", () => out.includes("\n"), 30_000);
  signals.send("SIGTERM");
  return { argv: ["demo", "--basic", "--json"], code: await done, out };
}

/** A one-line batch file for `pair batch plan|submit` (a model nobody serves: it ends at once). */
const BATCH_FILE = join(tmpdir(), `pair-tokens-batch-${process.pid}.jsonl`);
writeFileSync(
  BATCH_FILE,
  JSON.stringify({
    custom_id: "one",
    method: "POST",
    url: "/v1/chat/completions",
    body: { model: "nobody-serves-this", messages: [{ role: "user", content: "hi" }] },
  }),
);

/**
 * Every --json command line, in an order that keeps the node useful to the next one: the second
 * secret is stored first (and used by `rented attach`), deleted last.
 */
function runs(c: RunContext): Run[] {
  return [
    { key: "credential set", argv: ["credential", "set", c.other], config: false, stdin: c.otherSecret },
    { key: "credential list", argv: ["credential", "list"], config: false },
    { key: "status", argv: ["status"] },
    { key: "models", argv: ["models"] },
    { key: "nodes", argv: ["nodes"] },
    { key: "ps", argv: ["ps"] },
    { key: "jobs", argv: ["jobs"] },
    { key: "history", argv: ["history"] },
    { key: "pin", argv: ["pin"] },
    { key: "join --pin", argv: ["join", c.nowhere, "--pin", "123456"] },
    { key: "peers", argv: ["peers"] },
    { key: "unpair", argv: ["unpair", "nobody"] },
    { key: "apikey create", argv: ["apikey", "create", "second"] },
    { key: "apikey list", argv: ["apikey", "list"] },
    { key: "apikey revoke", argv: ["apikey", "revoke", "second"] },
    { key: "rented list|ls", argv: ["rented", "list"] },
    { key: "rented describe", argv: ["rented", "describe", NODE] },
    {
      key: "rented attach --provider",
      argv: [
        ...["rented", "attach", "extra", "--provider", "openai-compatible"],
        ...["--base-url", "https://127.0.0.1:9/v1", "--credential", `os-credential-store:pair/${c.other}`],
      ],
    },
    { key: "rented share on|off", argv: ["rented", "share", NODE, "on"] },
    { key: "rented policy", argv: ["rented", "policy", NODE, "prefer"] },
    { key: "rented reset", argv: ["rented", "reset", NODE] },
    { key: "rented check", argv: ["rented", "check"] },
    { key: "rented pause|resume", argv: ["rented", "pause", NODE] },
    { key: "rented delete", argv: ["rented", "delete", "nobody", "--yes"] },
    { key: "rented catalog", argv: ["rented", "catalog", "--credential", c.hfRef] },
    { key: "rented hardware", argv: ["rented", "hardware", "--credential", c.hfRef] },
    {
      key: "rented create",
      argv: [
        ...["rented", "create", "new-one", "--repo", "Qwen/Qwen3-0.6B", "--gpu", "l4"],
        ...["--region", "us-east-1", "--instance-size", "x1", "--usd-per-day", "1"],
        ...["--credential", c.hfRef, "--no-wait"],
      ],
    },
    {
      key: "rented create --provider huggingface-job --repo --flavor --window 2h",
      argv: [
        ...["rented", "create", "batch-one", "--provider", "huggingface-job", "--repo", "Qwen/Qwen3-0.6B"],
        ...["--flavor", "l4x1", "--window", "30m", "--usd-per-day", "1"],
        ...["--credential", c.hfRef, "--no-wait"],
      ],
    },
    { key: "batch plan", argv: ["batch", "plan", BATCH_FILE] },
    { key: "batch submit", argv: ["batch", "submit", BATCH_FILE, "--wait"] },
    { key: "batch list", argv: ["batch", "list"] },
    { key: "batch status", argv: ["batch", "status", "batch_none"], mayFail: true },
    { key: "batch cancel", argv: ["batch", "cancel", "batch_none"], mayFail: true },
    { key: "ui", argv: ["ui"] },
    { key: "doctor", argv: ["doctor"], mayFail: true },
    { key: "demo --basic", argv: ["demo", "--basic"], config: false, sandbox: true },
    { key: "credential delete", argv: ["credential", "delete", c.other], config: false },
  ];
}
