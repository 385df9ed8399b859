/**
 * What a `pair` command may touch of the process it runs in: its standard input (`pair credential
 * set` reads a secret from it), two output streams, environment, home directory, host name, temp
 * folder, wall clock and the stop signals (SIGINT/SIGTERM). Passed
 * into `main`, so tests run every command in-process with writers, env and signals of their own.
 * Must not know: any command, the node, the config.
 */

import { homedir, hostname, tmpdir } from "node:os";

export type StopSignal = "SIGINT" | "SIGTERM";

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

/** SIGINT and SIGTERM of this process. While a handler is registered, Node does not exit on them. */
export const processSignals: SignalSource = {
  onStop(handler) {
    const onInt = () => handler("SIGINT");
    const onTerm = () => handler("SIGTERM");
    process.on("SIGINT", onInt);
    process.on("SIGTERM", onTerm);
    return () => {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
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
    nowMs: () => Date.now(),
    signals: processSignals,
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
