// `pair credential set|delete|list` against the real Secret Service: the secret from stdin (piped, or
// typed at a hidden prompt), the newline rule, names only in every output, usage errors, and the
// failure path in a child process whose D-Bus address points at a dead socket. Names here stay in
// service `pair` (unique accounts): only os-credential-store.test.ts writes the shared index.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import type { CliInput } from "../../src/cli/cli-io.js";
import { OsCredentialStore } from "../../src/credentials/index.js";
import { runCli, startCli } from "../cli/cli-harness.js";
import { requireSecretService, uniqueName } from "./secret-service.js";
import { fakeHfToken } from "../support/fake-token.js";

const store = new OsCredentialStore({ callTimeoutMs: 10_000 });
const accounts: string[] = [];
function account(label: string): string {
  const name = uniqueName(label);
  accounts.push(name);
  return name;
}
const SECRET = fakeHfToken();

const piped = (text: string) => () => Readable.from([Buffer.from(text, "utf8")]) as CliInput;
const credential = (argv: string[], stdin: string) =>
  runCli(["credential", ...argv], { stdin: piped(stdin) });
const stored = async (name: string) => (await store.get({ service: "pair", account: name }))?.reveal();

beforeEach(requireSecretService);
afterAll(async () => {
  for (const name of accounts) await store.delete({ service: "pair", account: name }).catch(() => false);
});

function expectNoSecret(...outputs: string[]): void {
  for (const output of outputs) expect(output).not.toContain(SECRET);
}

describe("list --config: what the config refers to", () => {
  it("marks each stored name the config uses, and lists a referenced name the store lacks", async () => {
    const [present, absent] = [account("used"), account("missing")];
    expect((await credential(["set", present], SECRET)).code).toBe(0);
    const dir = mkdtempSync(join(tmpdir(), "pair-cred-config-"));
    const file = join(dir, "pair.yaml");
    const node = (name: string, ref: string) =>
      `  - name: ${name}\n    provider: openai-compatible\n    base_url: https://127.0.0.1:9/v1\n` +
      `    credential: os-credential-store:pair/${ref}\n`;
    writeFileSync(
      file,
      `node:\n  data_dir: ${dir}/data\nrented_nodes:\n${node("a", present)}${node("b", absent)}`,
    );
    try {
      // The option may come before the subcommand, as with every command.
      const r = await credential(["--config", file, "list", "--json"], "");
      expect(r.code, r.stderr).toBe(0);
      const rows = JSON.parse(r.stdout) as { credential: string; stored: boolean; used_by: string[] }[];
      expect(rows).toContainEqual(
        expect.objectContaining({
          credential: `os-credential-store:pair/${present}`,
          stored: true,
          used_by: ["rented node a"],
        }),
      );
      expect(rows).toContainEqual(
        expect.objectContaining({
          credential: `os-credential-store:pair/${absent}`,
          stored: false,
          used_by: ["rented node b"],
        }),
      );
      const text = await credential(["list", "--config", file], "");
      expect(text.stdout).toContain(
        `os-credential-store:pair/${absent}  MISSING: pair credential set pair/${absent}`,
      );
      expectNoSecret(r.stdout, r.stderr, text.stdout, text.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("set, list, delete over stdin", () => {
  it("stores a piped secret, lists its name, deletes it — no output ever holds the secret", async () => {
    const name = account("cli");
    const set = await credential(["set", name], `${SECRET}\n`);
    expect(set).toMatchObject({ code: 0, stderr: "" });
    expect(set.stdout).toBe(
      `Stored os-credential-store:pair/${name} in the OS credential store. Config refers to it as:\n` +
        `  credential: os-credential-store:pair/${name}\n`,
    );
    expect(await stored(name)).toBe(SECRET);

    const list = await credential(["list"], "");
    expect(list.code).toBe(0);
    expect(list.stdout.split("\n")).toContain(`os-credential-store:pair/${name}`);
    const listJson = await credential(["list", "--json"], "");
    expect(JSON.parse(listJson.stdout)).toContainEqual({
      credential: `os-credential-store:pair/${name}`,
      service: "pair",
      account: name,
    });

    const deleted = await credential(["delete", name, "--json"], "");
    expect(deleted).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(deleted.stdout)).toEqual({
      credential: `os-credential-store:pair/${name}`,
      deleted: true,
    });
    expect(await stored(name)).toBeUndefined();

    const again = await credential(["delete", name], "");
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /no credential os-credential-store:pair\/\S+ is stored \(pair credential list/,
    );
    expectNoSecret(set.stdout, set.stderr, list.stdout, listJson.stdout, deleted.stdout, again.stderr);
  });

  it("accepts pair/NAME and the whole os-credential-store: reference; --json prints the reference", async () => {
    const name = account("forms");
    const r = await credential(["set", `os-credential-store:pair/${name}`, "--json"], "one");
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(r.stdout)).toEqual({ credential: `os-credential-store:pair/${name}` });
    const replaced = await credential(["set", `pair/${name}`], "two");
    expect(replaced.code).toBe(0);
    expect(await stored(name)).toBe("two");
  });

  it.each([
    ["tok\n", "tok"],
    ["tok\r\n", "tok"],
    ["tok", "tok"],
    ["  spaced tok \t", "  spaced tok \t"],
  ])("drops one trailing newline only: %j", async (input, expected) => {
    const name = account("nl");
    expect((await credential(["set", name], input)).code).toBe(0);
    expect(await stored(name)).toBe(expected);
  });

  it.each([
    ["", /empty secret on stdin: nothing was stored — pipe the secret in/],
    ["\n", /empty secret on stdin/],
    ["tok\n\n", /holds a line break \(only one trailing newline is dropped\)/],
    ["first\nsecond", /holds a line break/],
  ])("refuses %j (exit 1), storing nothing", async (input, message) => {
    const name = account("bad");
    const r = await credential(["set", name], input);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(message);
    expect(await stored(name)).toBeUndefined();
  });

  it("refuses a secret over 64 KiB without storing or printing it", async () => {
    const name = account("big");
    const r = await credential(["set", name], "Z".repeat(70_000));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/longer than 65536 bytes; nothing was stored/);
    expect(r.stderr).not.toMatch(/ZZZZ/);
    expect(await stored(name)).toBeUndefined();
  });
});

/** A terminal stand-in: raw mode recorded, keys sent by hand. */
function fakeTty(): { input: CliInput; send(keys: string): void; rawModes: boolean[] } {
  const stream = new PassThrough();
  const rawModes: boolean[] = [];
  const input = Object.assign(stream, {
    isTTY: true,
    setRawMode(raw: boolean) {
      rawModes.push(raw);
      return stream;
    },
  });
  return { input, send: (keys) => void stream.write(keys), rawModes };
}

describe("on a terminal: a prompt that does not echo", () => {
  it("reads one line in raw mode, honours Backspace, ignores cursor keys, echoes nothing", async () => {
    const name = account("tty");
    const tty = fakeTty();
    const run = startCli(["credential", "set", name], { stdin: () => tty.input });
    await run.waitFor("stderr", /Secret for os-credential-store:pair\/\S+ \(typing is hidden\): $/);
    // Typed in pieces: a cursor key between them, and one wrong character rubbed out.
    tty.send(SECRET.slice(0, 6));
    tty.send("\u001b[D");
    tty.send(`${SECRET.slice(6, 16)}X\u007f${SECRET.slice(16)}`);
    tty.send("\r");
    const r = await run.done;
    expect(r.code).toBe(0);
    expect(tty.rawModes).toEqual([true, false]);
    expect(await stored(name)).toBe(SECRET);
    expect(r.stderr).toBe(`Secret for os-credential-store:pair/${name} (typing is hidden): \n`);
    expectNoSecret(r.stdout, r.stderr);
  });

  it("Ctrl-C cancels: exit 1, nothing stored, raw mode off again", async () => {
    const name = account("ctrlc");
    const tty = fakeTty();
    const run = startCli(["credential", "set", name], { stdin: () => tty.input });
    await run.waitFor("stderr", /typing is hidden/);
    tty.send("half-typed\u0003");
    const r = await run.done;
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cancelled: nothing was stored/);
    expect(r.stderr).not.toContain("half-typed");
    expect(tty.rawModes).toEqual([true, false]);
    expect(await stored(name)).toBeUndefined();
  });
});

describe("usage errors (exit 2) never repeat a pasted secret", () => {
  it.each([
    [["credential"], /expected one of: set, delete, list/],
    [["credential", "get", "x"], /unknown subcommand "get"/],
    [["credential", "set"], /missing NAME/],
    [
      ["credential", "set", "hf", SECRET],
      /expected one NAME; the secret is read from stdin, never from the command line/,
    ],
    [["credential", "set", SECRET], /NAME: the account name looks like a literal secret/],
    [["credential", "delete", "bad name"], /NAME: expected SERVICE\/ACCOUNT or ACCOUNT/],
    [["credential", "list", "extra"], /Unexpected argument 'extra'/],
    [["credential", "lst"], /unknown subcommand "lst" — did you mean "list"\?/],
  ])("pair %j", async (argv, message) => {
    const r = await runCli(argv, { stdin: piped("") });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/Usage: pair credential/);
    expectNoSecret(r.stderr);
  });
});

describe("no credential store reachable (a child process with a dead D-Bus socket)", () => {
  const root = fileURLToPath(new URL("../../../../", import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), "pair-dead-bus-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function pair(argv: string[], stdin: string) {
    return new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>(
      (resolve, reject) => {
        const started = performance.now();
        const child = spawn(process.execPath, [join(root, "bin", "pair.js"), ...argv], {
          cwd: root,
          env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(dir, "dead.sock")}` },
          stdio: ["pipe", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.setEncoding("utf8").on("data", (t: string) => (stdout += t));
        child.stderr.setEncoding("utf8").on("data", (t: string) => (stderr += t));
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          reject(new Error(`pair ${argv.join(" ")} hung for 30 s; stderr:\n${stderr}`));
        }, 30_000);
        child.once("exit", (code) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr, ms: performance.now() - started });
        });
        child.stdin.end(stdin);
      },
    );
  }

  it.each([
    [["credential", "list"], /cannot list the names of PAIR.s credentials/],
    [["credential", "set", "hf"], /cannot store os-credential-store:pair\/hf/],
    [["credential", "delete", "hf", "--json"], /cannot read os-credential-store:pair\/hf/],
  ])("pair %j: exit 1, credential_unavailable with what to do, fast", async (argv, what) => {
    const r = await pair(argv, `${SECRET}\n`);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^pair credential: credential_unavailable: /);
    expect(r.stderr).toMatch(what);
    expect(r.stderr).toMatch(/no D-Bus session bus answers/);
    expect(r.stderr).toMatch(
      /dbus-run-session -- sh -c .*gnome-keyring-daemon --unlock --components=secrets/,
    );
    expect(r.stderr).toMatch(/Debian packages: gnome-keyring dbus/);
    expect(r.stderr).toContain("dead.sock");
    expect(r.ms).toBeLessThan(20_000);
    expectNoSecret(r.stdout, r.stderr);
  });
});
