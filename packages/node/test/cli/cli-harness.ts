// Run `pair` in-process: captured stdout/stderr, an isolated env and home dir, signals sent by hand.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { CliIo, SignalSource, StopSignal } from "../../src/cli/cli-io.js";
import { main } from "../../src/cli/main.js";

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface ManualSignals extends SignalSource {
  send(signal: StopSignal): void;
  readonly listeners: number;
}

export function manualSignals(): ManualSignals {
  const handlers = new Set<(signal: StopSignal) => void>();
  return {
    onStop(handler) {
      const h = (signal: StopSignal) => handler(signal);
      handlers.add(h);
      return () => handlers.delete(h);
    },
    send(signal) {
      for (const h of [...handlers]) h(signal);
    },
    get listeners() {
      return handlers.size;
    },
  };
}

/** A home dir that does not exist, so the real ~/.config/pair is never read (nothing is written there). */
export const emptyHome = join(tmpdir(), "pair-cli-test-home-that-does-not-exist");

export interface RunningCli {
  readonly done: Promise<CliResult>;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout (or stderr) matches; rejects after `timeoutMs`. */
  waitFor(stream: "stdout" | "stderr", pattern: RegExp, timeoutMs?: number): Promise<string>;
}

export function startCli(argv: readonly string[], io: Partial<CliIo> = {}): RunningCli {
  let out = "";
  let err = "";
  const done = main(argv, {
    stdin: () => Readable.from([]), // an empty pipe: never the test runner's own stdin
    stdout: (t) => void (out += t),
    stderr: (t) => void (err += t),
    env: {},
    homeDir: emptyHome,
    hostName: "test-host",
    signals: manualSignals(),
    ...io,
  }).then((code) => ({ code, stdout: out, stderr: err }));
  return {
    done,
    stdout: () => out,
    stderr: () => err,
    waitFor: async (stream, pattern, timeoutMs = 5_000) => {
      const deadline = Date.now() + timeoutMs;
      let finished = false;
      void done.finally(() => (finished = true));
      for (;;) {
        const text = stream === "stdout" ? out : err;
        if (pattern.test(text)) return text;
        if (finished || Date.now() > deadline)
          throw new Error(`no ${String(pattern)} on ${stream}; stdout:\n${out}\nstderr:\n${err}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

export function runCli(argv: readonly string[], io: Partial<CliIo> = {}): Promise<CliResult> {
  return startCli(argv, io).done;
}

/** A temp folder with a config file in it (the YAML may name the folder); `cleanup` removes both. */
export function writeConfig(yaml: string | ((dir: string) => string)): {
  file: string;
  dir: string;
  cleanup(): void;
} {
  const dir = mkdtempSync(join(tmpdir(), "pair-cli-config-"));
  const file = join(dir, "pair.yaml");
  writeFileSync(file, typeof yaml === "string" ? yaml : yaml(dir));
  return { file, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A port nothing listens on (bound once by the OS, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

/** True when a connection to the port is refused. */
export function portClosed(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });
}
