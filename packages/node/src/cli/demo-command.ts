/**
 * `pair demo`, as the command line sees it: its usage, its flags, and the promises the usage makes
 * (the ports, the clock scale). The sandbox itself is the package @pair/demo, loaded by `run` only:
 * every other `pair` process starts without it and without the emulators it runs (docs/demo.md).
 * By default the two-node story — a sponsor and a peer, an emulated Hugging Face endpoint, the tour
 * through the seed's steps 1–7, then the sandbox stays up until Ctrl-C; `--tour-only` runs the tour
 * and exits; `--basic` is the single-node sandbox over emulated engines.
 * Must not know: what either sandbox holds, what is printed.
 */

import { UsageError } from "./cli-errors.js";
import type { Command } from "./command.js";
import { CONFIG_OPTION, HELP_OPTION, intFlag, JSON_OPTION, parseCommandArgs } from "./command-args.js";

/** The port PAIR itself uses by default: the demo never takes it. */
export const PAIR_DEFAULT_PORT = 11434;
/** Tried first, so the demo's URL is the same from run to run. */
export const DEMO_PREFERRED_PORT = 11500;
/** After the tour, virtual time runs this many times real time. */
export const DEMO_CLOCK_SCALE = 10;

export const demoCommand: Command = {
  name: "demo",
  summary: "a self-contained sandbox on loopback: two nodes, an emulated rented GPU, a guided tour",
  usage: `Usage: pair demo [--tour-only] [--port N] [--json] [--verbose]
       pair demo --basic [--port N] [--json]

Starts, on loopback only and in a temp folder: node A (the sponsor) and node B (a peer), each over
an emulated local engine, paired through the PIN flow; an emulated Hugging Face account over HTTPS
(a throwaway CA that A trusts) with one private Inference Endpoint that A manages as the rented node
gpu-hf. Then a tour runs the seed's validation steps 1–7 — share off/on, cold start, idle pause and
wake, budget cap, sponsor exit, precedence, refusals — printing each command and what it shows,
with minutes and days passing in virtual time (about 20 s in all). Afterwards the sandbox stays up,
virtual time running ${DEMO_CLOCK_SCALE}× real time, and it prints what to try. Ctrl-C stops
everything and removes the temp folder. It never uses 11434 and leaves a running node alone.
A's Hugging Face token is generated and held in memory by the demo itself (no OS credential store
is needed, and no config can select that source).

Options:
  --tour-only  run the tour, then stop; exit 0 when every step turned out as the seed says, else 1
  --basic      the single-node sandbox instead: emulated Ollama and vLLM engines, and what to try
  --port N     B's port (with --basic, the node's); 0: any free port; default ${DEMO_PREFERRED_PORT}, or any free port when taken
  --json       one JSON line on stdout (two nodes: after the tour, with every step's outcome;
               --basic: {"url", "config_file", "data_dir", "models", …} once ready)
  --verbose    the nodes' own log lines on stderr
  --config F   accepted as by every command, but not used: the sandbox writes its own nodes' configs
  -h, --help   show this help`,
  async run(args, io) {
    const flags = parseCommandArgs(args, {
      ...CONFIG_OPTION,
      ...JSON_OPTION,
      ...HELP_OPTION,
      port: { type: "string" },
      basic: { type: "boolean" },
      "tour-only": { type: "boolean" },
      verbose: { type: "boolean" },
    });
    const port = flags.port === undefined ? undefined : intFlag("--port", flags.port, 0, 65_535);
    if (port === PAIR_DEFAULT_PORT) {
      throw new UsageError(`--port: ${PAIR_DEFAULT_PORT} is PAIR's own port; the demo never takes it`);
    }
    const json = flags.json === true;
    if (flags.config !== undefined)
      io.stderr(
        `pair demo: --config ${flags.config} is not used: the sandbox writes its own nodes' configs\n`,
      );
    if (flags.basic === true && flags["tour-only"] === true)
      throw new UsageError("--tour-only: the --basic sandbox has no tour");
    // The one place the daemon reaches the demo: a dynamic import, so the bundle keeps it (and the
    // emulators) in a chunk of its own that only `pair demo` loads (scripts/build-cli.mjs).
    const { runBasicDemo, runClusterDemo } = await import("@pair/demo");
    if (flags.basic === true) return runBasicDemo({ port, json }, io);
    return runClusterDemo(
      { port, json, tourOnly: flags["tour-only"] === true, verbose: flags.verbose === true },
      io,
    );
  },
};
