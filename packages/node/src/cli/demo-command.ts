/**
 * `pair demo`: build the sandbox (demo-sandbox.ts), print what to try (demo-guide.ts) or, with
 * `--json`, one JSON line once ready, run until SIGINT/SIGTERM, then take everything down.
 * Must not know: what the sandbox holds, what the guide says.
 */

import { ListenError } from "../node.js";
import { CliFailure, EXIT_OK, UsageError } from "./cli-errors.js";
import { nextStopSignal } from "./cli-io.js";
import type { Command } from "./command.js";
import { HELP_OPTION, intFlag, JSON_OPTION, parseCommandArgs } from "./command-args.js";
import { demoGuide, demoJson } from "./demo-guide.js";
import { DEMO_PREFERRED_PORT, PAIR_DEFAULT_PORT, startDemoSandbox } from "./demo-sandbox.js";
import { eventLog } from "./event-log.js";

export const demoCommand: Command = {
  name: "demo",
  summary: "a self-contained sandbox: a node over emulated engines, and what to try",
  usage: `Usage: pair demo [--port N] [--json]

Starts a sandbox on loopback: emulated engines (an Ollama and a vLLM), a node over them with its
own config and data dir in a temp folder, and prints what to try (curl, the openai client, the
ollama CLI, pair jobs / pair history). It never uses 11434 and leaves a running node alone.
Ctrl-C stops it and removes the temp folder.

Options:
  --port N    the node's port (0: any free port; default ${DEMO_PREFERRED_PORT}, or any free port when taken)
  --json      print one JSON line {"url", "config_file", "data_dir", "models", …} once ready
  -h, --help  show this help`,
  async run(args, io) {
    const flags = parseCommandArgs(args, { ...JSON_OPTION, ...HELP_OPTION, port: { type: "string" } });
    const port = flags.port === undefined ? undefined : intFlag("--port", flags.port, 0, 65_535);
    if (port === PAIR_DEFAULT_PORT) {
      throw new UsageError(`--port: ${PAIR_DEFAULT_PORT} is PAIR's own port; the demo never takes it`);
    }
    const log = eventLog(io);
    const stop = nextStopSignal(io.signals);
    let sandbox;
    try {
      sandbox = await startDemoSandbox({
        tmpDir: io.tmpDir,
        ...(port === undefined ? {} : { port }),
        log,
      });
    } catch (error) {
      stop.cancel();
      if (error instanceof ListenError) {
        throw new CliFailure(
          error.code === "port_in_use"
            ? `port ${port ?? DEMO_PREFERRED_PORT} is in use — pick another with --port N, or leave --port out`
            : error.message,
          { cause: error },
        );
      }
      throw error;
    }
    try {
      if (flags.json === true) io.stdout(`${JSON.stringify(demoJson(sandbox))}\n`);
      else io.stdout(demoGuide(sandbox));
      const signal = await stop.signal;
      log(`${signal}: stopping the demo`);
    } finally {
      stop.cancel();
      await sandbox.close();
    }
    log(`demo stopped; ${sandbox.dir} removed`);
    return EXIT_OK;
  },
};
