/**
 * What a `pair` command may touch of the process it runs in: its standard input (`pair credential
 * set` reads a secret from it), two output streams, environment, home directory, host name, temp
 * folder, wall clock and the stop signals (SIGINT, SIGTERM, SIGHUP; SIGBREAK on Windows). Passed
 * into `main`, so tests run every command in-process with writers, env and signals of their own.
 * Must not know: any command, the node, the config.
 */

import { homedir, hostname, tmpdir } from "node:os";
import { SYSTEM_CLOCK } from "@pair/cluster";

export type StopSignal = "SIGINT" | "SIGTERM" | "SIGHUP" | "SIGBREAK";

/** Where stop requests come from. `onStop` returns a function that removes the handler. */
export interface SignalSource {
  onStop(handler: (signal: StopSignal) => void): () => void;
}

/** Standard input as a command sees it: a stream, and on a terminal the raw-mode switch. */
export type CliInput = NodeJS.ReadableStream & {
  /** True on a terminal: a secret is then typed at a prompt that does not echo. */
  readonly isTTY?: boolean;
  setRawMode?(raw: boolean): unknown;
};

export interface CliIo {
  /** Standard input, opened only when a command asks for it. */
  readonly stdin: () => CliInput;
  /** Text for the user or the script that called (`--json` goes here), written as given. */
  readonly stdout: (text: string) => void;
  /** Messages, logs and usage errors, written as given. */
  readonly stderr: (text: string) => void;
  /** True when stdout is a terminal: progress is then one line rewritten in place (live-line.ts). */
  readonly stdoutIsTerminal?: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Expands `~` in config paths; the default config file lives under it. */
  readonly homeDir: string;
  /** The default node name. */
  readonly hostName: string;
  /** Where `pair demo` makes its sandbox folder. */
  readonly tmpDir: string;
  /** Wall clock, epoch ms: log stamps, `--since 15m`, "today" in tables. */
  readonly nowMs: () => number;
  readonly signals: SignalSource;
}

/**
 * Every way the OS asks this process to stop that Node can see: Ctrl-C (SIGINT), a service manager
 * (SIGTERM), a closed terminal or console window (SIGHUP; Windows then allows about 10 s), Ctrl+Break
 * (SIGBREAK, Windows only). Each runs the graceful stop, so rented nodes are paused on exit. While a
 * handler is registered, Node does not exit on them.
 */
export const processSignals: SignalSource = {
  onStop(handler) {
    const signals: StopSignal[] = ["SIGINT", "SIGTERM", "SIGHUP"];
    if (process.platform === "win32") signals.push("SIGBREAK");
    const listeners = signals.map((signal) => {
      const listener = () => handler(signal);
      process.on(signal, listener);
      return () => void process.off(signal, listener);
    });
    return () => {
      for (const off of listeners) off();
    };
  },
};

/** The real process, with any part replaced. */
export function processIo(overrides: Partial<CliIo> = {}): CliIo {
  return {
    stdin: () => process.stdin,
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    env: process.env,
    homeDir: homedir(),
    hostName: hostname(),
    tmpDir: tmpdir(),
    nowMs: () => SYSTEM_CLOCK.now().wallMs,
    signals: processSignals,
    // A replaced stdout is not the terminal, unless the caller says it is.
    stdoutIsTerminal: overrides.stdout === undefined && process.stdout.isTTY === true,
    ...overrides,
  };
}

/** Resolves with the first stop signal; the handler is removed once it arrives or `cancel` is called. */
export function nextStopSignal(signals: SignalSource): {
  readonly signal: Promise<StopSignal>;
  cancel(): void;
} {
  let remove: () => void = () => undefined;
  const signal = new Promise<StopSignal>((resolve) => {
    remove = signals.onStop((received) => {
      remove();
      resolve(received);
    });
  });
  return { signal, cancel: () => remove() };
}
