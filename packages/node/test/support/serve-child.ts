/**
 * A `pair serve` child process for tests that need a real node process to kill or freeze: its own
 * data dir, client and cluster ports on 127.0.0.1 and config file, one Ollama engine (usually an
 * emulator in the test process). It can be SIGKILLed, frozen with SIGSTOP, thawed with SIGCONT and
 * started again on the same data dir (same identity, so still paired).
 * Must not know: what a test asserts, how pairing works inside (it drives the node's admin API).
 */

import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PAIR_NODE_ENV, PAIR_NODE_FLAGS } from "../../src/process-flags.js";
import { untilValue } from "./eventually.js";

const PAIR_BIN = fileURLToPath(new URL("../../../../bin/pair.js", import.meta.url));

/**
 * Ports a test child will listen on, picked below Linux's ephemeral range (32768–60999 by default).
 * A port the kernel hands out for `listen(0)` comes from that range, which is also where every
 * outgoing connection's local port comes from: between the pick and the child's listen (or its
 * restart, minutes later), another test's connection could take it (seen in CI: "cluster_listen
 * 127.0.0.1:40381 is already in use"). Below the range only another listener can, and the pick is
 * random and checked.
 */
const PICK_FROM = 20_000;
const PICK_TO = 32_000;

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = PICK_FROM + Math.floor(Math.random() * (PICK_TO - PICK_FROM));
    if (await listensOn(port)) return port;
  }
  throw new Error(`no free port found in ${PICK_FROM}–${PICK_TO} on 127.0.0.1 after 50 tries`);
}

/** Whether a server could listen on 127.0.0.1:`port` just now (it is closed again). */
async function listensOn(port: number): Promise<boolean> {
  const server = createServer();
  const ok = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => resolve(true));
  });
  if (ok) await new Promise((resolve) => server.close(resolve));
  return ok;
}

export interface ServeChildOptions {
  /** The node's name (also its engine's, with `-ollama`). */
  readonly name: string;
  /** Where its data dir and config file go (the caller removes it). */
  readonly dir: string;
  /** The Ollama engine it adopts. */
  readonly engineUrl: string;
  /** The engine's `max_concurrent` (default 4). */
  readonly maxConcurrent?: number;
  /** Extra environment variables for the child (this process's environment otherwise). */
  readonly env?: Readonly<Record<string, string>>;
}

/** A process's resident memory (MiB), read from outside: /proc/PID/status VmRSS. */
export function rssMib(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "latin1"))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb) / 1024;
}

/** A `pair serve` child process with its own data dir, ports and config file. */
export class ServeChild {
  process: ChildProcess | undefined;
  output = "";
  readonly name: string;
  readonly url: string;
  readonly clusterAddress: string;
  readonly dataDir: string;
  readonly #config: string;
  readonly #env: Readonly<Record<string, string>>;

  private constructor(options: ServeChildOptions, port: number, clusterPort: number) {
    this.name = options.name;
    this.url = `http://127.0.0.1:${port}`;
    this.clusterAddress = `127.0.0.1:${clusterPort}`;
    this.dataDir = join(options.dir, "data");
    this.#config = join(options.dir, "pair.yaml");
    this.#env = options.env ?? {};
    writeFileSync(
      this.#config,
      [
        "node:",
        `  name: ${options.name}`,
        `  data_dir: ${this.dataDir}`,
        `  listen: 127.0.0.1:${port}`,
        `  cluster_listen: 127.0.0.1:${clusterPort}`,
        "  discovery: { mdns: false }",
        "engines:",
        `  - name: ${options.name}-ollama`,
        "    api: ollama",
        `    base_url: ${options.engineUrl}`,
        `    max_concurrent: ${options.maxConcurrent ?? 4}`,
        "    probe_interval_s: 0.2",
      ].join("\n"),
    );
  }

  /** Writes its config on two free ports; `start()` runs it. */
  static async create(options: ServeChildOptions): Promise<ServeChild> {
    return new ServeChild(options, await freePort(), await freePort());
  }

  /** Spawn `pair serve` (with the environment and flags `pair`'s `#!` line gives node) and wait (up to 20 s) until its client port answers. */
  async start(): Promise<void> {
    const child = spawn(process.execPath, [...PAIR_NODE_FLAGS, PAIR_BIN, "serve", "--config", this.#config], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...PAIR_NODE_ENV, ...this.#env },
    });
    this.process = child;
    child.stdout?.on("data", (d: Buffer) => (this.output += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (this.output += d.toString()));
    await untilValue(async () => (await fetch(`${this.url}/`)).status === 200, 20_000).catch((e: unknown) => {
      throw new Error(`pair serve did not start: ${String(e)}\n${this.output}`);
    });
  }

  get adminToken(): string {
    return readFileSync(join(this.dataDir, "admin.token"), "utf8").trim();
  }

  /** Call an admin route with its token (POST when `body` is given). */
  async admin(path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
    const res = await fetch(`${this.url}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${this.adminToken}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(5_000),
    });
    return { status: res.status, json: await res.json() };
  }

  /** A pairing PIN, as `pair pin` shows it. */
  async pin(): Promise<string> {
    const answer = await this.admin("/pair/v1/pin", {});
    if (answer.status !== 200) throw new Error(`${this.name}: pin answered HTTP ${answer.status}`);
    return (answer.json as { pin: string }).pin;
  }

  get running(): boolean {
    return this.process !== undefined && this.process.exitCode === null && this.process.signalCode === null;
  }

  /** Freeze it (SIGSTOP): its sockets stay open, nothing answers. */
  freeze(): void {
    if (this.running) this.process!.kill("SIGSTOP");
  }

  /** Thaw it (SIGCONT). */
  thaw(): void {
    if (this.running) this.process!.kill("SIGCONT");
  }

  /** SIGKILL it (a frozen child dies too) and wait for its exit. */
  async kill(): Promise<void> {
    const child = this.process;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  }
}
