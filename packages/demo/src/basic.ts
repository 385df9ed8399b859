/**
 * `pair demo --basic`: the single-node sandbox (sandbox.ts) — one node over emulated Ollama and
 * vLLM engines — prints what to try (guide.ts) or, with `--json`, one JSON line once ready, runs
 * until SIGINT/SIGTERM, then takes everything down.
 * Must not know: what the sandbox holds, what the guide says.
 */

import {
  CliFailure,
  DEMO_PREFERRED_PORT,
  eventLog,
  EXIT_OK,
  ListenError,
  nextStopSignal,
  type CliIo,
} from "@pair/node";
import { demoGuide, demoJson } from "./guide.js";
import { startDemoSandbox } from "./sandbox.js";

export async function runBasicDemo(
  options: { readonly port: number | undefined; readonly json: boolean },
  io: CliIo,
): Promise<number> {
  const { port } = options;
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
    if (options.json) io.stdout(`${JSON.stringify(demoJson(sandbox))}\n`);
    else io.stdout(demoGuide(sandbox));
    const signal = await stop.signal;
    log(`${signal}: stopping the demo`);
  } finally {
    stop.cancel();
    await sandbox.close();
  }
  log(`demo stopped; ${sandbox.dir} removed`);
  return EXIT_OK;
}
