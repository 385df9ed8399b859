/**
 * `pair serve`: load the config, run the node in the foreground with one log line per event on
 * stderr, and on SIGINT/SIGTERM shut down gracefully — stop accepting, give requests in flight a
 * bounded time to finish, end the rest, exit 0. A refused config or a taken port is exit 1.
 * Must not know: what the node does inside, how the config file is parsed.
 */

import { ApiKeyError } from "../auth/index.js";
import { ClusterError } from "@pair/cluster";
import { loadConfig } from "../config/index.js";
import { ListenError, startNode } from "../node.js";
import { CliFailure, EXIT_OK } from "./cli-errors.js";
import type { StopSignal } from "./cli-io.js";
import type { Command } from "./command.js";
import { CONFIG_OPTION, HELP_OPTION, JSON_OPTION, parseCommandArgs } from "./command-args.js";
import { eventLog, logFormatOf } from "./event-log.js";

/** How long requests in flight may take to finish once a stop was asked for. */
export const SERVE_GRACE_MS = 10_000;

export const serveCommand: Command = {
  name: "serve",
  summary: "run the node in the foreground until SIGINT/SIGTERM",
  usage: `Usage: pair serve [--config FILE] [--json]

Runs this machine's PAIR node in the foreground: the OpenAI and Ollama APIs on node.listen
(default 127.0.0.1:11434) over the engines of the config. Logs one line per event on stderr.
Ctrl-C (SIGINT) or SIGTERM stops it: no new requests are taken and those in flight get up to
${SERVE_GRACE_MS / 1000} s to finish.

Options:
  --config FILE  the config (else $PAIR_CONFIG, else the default file (README); with no file at
                 all the defaults apply: listen on 127.0.0.1:11434, adopt Ollama on 127.0.0.1:11435)
  --json         log one JSON object a line ({"time", "msg"}), as PAIR_LOG_FORMAT=json does
  -h, --help     show this help

Under journald (a systemd unit) the lines carry no time of their own: the journal stamps them.
If Ollama holds 11434, move it: OLLAMA_HOST=127.0.0.1:11435 ollama serve`,
  async run(args, io) {
    const flags = parseCommandArgs(args, { ...CONFIG_OPTION, ...JSON_OPTION, ...HELP_OPTION });
    const log = eventLog(io, flags.json === true ? "json" : logFormatOf(io.env));
    // Listen for stop signals from the start, so Ctrl-C during start-up still shuts down cleanly.
    let stopping: StopSignal | undefined;
    let onFirstStop: (signal: StopSignal) => void = () => undefined;
    const stopAsked = new Promise<StopSignal>((resolve) => (onFirstStop = resolve));
    const unsubscribe = io.signals.onStop((signal) => {
      if (stopping !== undefined) {
        log(`${signal}: already stopping (requests in flight get up to ${SERVE_GRACE_MS / 1000} s)`);
        return;
      }
      stopping = signal;
      onFirstStop(signal);
    });
    try {
      const loaded = await loadConfig({
        file: flags.config,
        env: io.env,
        homeDir: io.homeDir,
        hostName: io.hostName,
      });
      log(
        loaded.found
          ? `config: ${loaded.file.path}`
          : `config: no file at ${loaded.file.path}, running with the defaults`,
      );
      let node;
      try {
        node = await startNode({
          config: loaded.config,
          seams: {
            log,
            statusExtras: { config_file: loaded.found ? loaded.file.path : null },
          },
        });
      } catch (error) {
        if (error instanceof ListenError || error instanceof ApiKeyError || error instanceof ClusterError)
          throw new CliFailure(error.message, { cause: error });
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "EACCES" || code === "EPERM" || code === "EROFS" || code === "ENOTDIR") {
          throw new CliFailure(
            `cannot use the data dir ${loaded.config.node.dataDir} (${(error as Error).message}) — make it ` +
              "writable by this user, or set node.data_dir in the config",
            { cause: error },
          );
        }
        throw error;
      }
      log(`data dir: ${node.dataDir} (admin token in admin.token)`);
      const signal = await stopAsked;
      const inFlight = node.history.running().length;
      log(
        `${signal}: stopping — no new requests` +
          (inFlight === 0 ? "" : `; ${inFlight} in flight get up to ${SERVE_GRACE_MS / 1000} s to finish`),
      );
      await node.close(SERVE_GRACE_MS);
      log("stopped");
      return EXIT_OK;
    } finally {
      unsubscribe();
    }
  },
};
