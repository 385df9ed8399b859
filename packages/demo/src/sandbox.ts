/**
 * The sandbox `pair demo` runs in: engine emulators on loopback, a temp folder holding a config file
 * and a data dir, and a node on its own port (never 11434; 11500 when free, else any free port), so
 * a node already running is left alone. The plan is data (`DEMO_ENGINES`); later issues add peers,
 * emulated providers and rented nodes here. `close` ends everything it started and removes the folder.
 * Must not know: the command line, what is printed.
 */

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startEngineEmulator, type EngineEmulator } from "@pair/emulators";
import {
  DEMO_PREFERRED_PORT,
  ListenError,
  PAIR_DEFAULT_PORT,
  parseConfig,
  startNode,
  type EventLog,
  type RunningNode,
} from "@pair/node";

/** Requests in flight get this long to finish when the demo stops. */
export const DEMO_GRACE_MS = 3_000;

export interface DemoEngineSpec {
  readonly name: string;
  /** The dialect the node speaks to it with. */
  readonly api: "ollama" | "openai";
  /** What it stands in for, as shown to the user. */
  readonly label: string;
  readonly models: readonly string[];
}

/** One model on both, so the node has a choice to make. */
export const DEMO_SHARED_MODEL = "qwen2.5:0.5b";

export const DEMO_ENGINES: readonly DemoEngineSpec[] = [
  { name: "ollama", api: "ollama", label: "Ollama", models: ["llama3.2:1b", DEMO_SHARED_MODEL] },
  { name: "vllm", api: "openai", label: "vLLM", models: ["Qwen/Qwen2.5-7B-Instruct", DEMO_SHARED_MODEL] },
];

export interface DemoSandboxOptions {
  /** Where the sandbox folder is made. */
  readonly tmpDir: string;
  /** An explicit port (0: any free port); a taken one fails with ListenError. Default: preferred, else any. */
  readonly port?: number;
  /** Default DEMO_PREFERRED_PORT. */
  readonly preferredPort?: number;
  readonly engines?: readonly DemoEngineSpec[];
  /** Delay between generated tokens, so streaming is visible (default 40 ms). */
  readonly tokenDelayMs?: number;
  readonly log?: EventLog;
}

export interface DemoEngine extends DemoEngineSpec {
  /** The base URL the node adopted it by (`/v1` for OpenAI). */
  readonly baseUrl: string;
  readonly port: number;
}

export interface DemoSandbox {
  readonly url: string;
  readonly port: number;
  readonly nodeName: string;
  /** The sandbox folder; removed by `close`. */
  readonly dir: string;
  readonly configFile: string;
  readonly dataDir: string;
  readonly engines: readonly DemoEngine[];
  /** Every model the node serves, sorted. */
  readonly models: readonly string[];
  /** Stop the node (grace `DEMO_GRACE_MS`), the emulators, and remove the folder. Idempotent. */
  close(): Promise<void>;
}

const DEMO_NODE_NAME = "demo";
/** In the config before the node started; the node listens on any free loopback port instead. */
const DEMO_CLUSTER_PORT_PLACEHOLDER = 14323;

function configYaml(
  dataDir: string,
  port: number,
  engines: readonly DemoEngine[],
  clusterPort = DEMO_CLUSTER_PORT_PLACEHOLDER,
): string {
  // The cluster port stays on loopback; the node takes any free one (overrides.clusterPort 0) and the
  // file is rewritten with the port it got.
  return [
    "# Written by `pair demo`; removed when the demo stops.",
    "node:",
    `  name: ${DEMO_NODE_NAME}`,
    `  data_dir: ${JSON.stringify(dataDir)}`,
    `  listen: 127.0.0.1:${port}`,
    `  cluster_listen: 127.0.0.1:${clusterPort}`,
    "  discovery: { mdns: false }",
    "engines:",
    ...engines.flatMap((e) => [
      `  - name: ${e.name}`,
      `    api: ${e.api}`,
      `    base_url: ${e.baseUrl}`,
      "    max_concurrent: 4",
      "    probe_interval_s: 2",
    ]),
    "",
  ].join("\n");
}

async function startNodeOnDemoPort(
  options: DemoSandboxOptions,
  dir: string,
  dataDir: string,
  engines: readonly DemoEngine[],
): Promise<RunningNode> {
  const preferred = options.preferredPort ?? DEMO_PREFERRED_PORT;
  const start = (port: number) => {
    if (port === PAIR_DEFAULT_PORT) throw new RangeError(`the demo never listens on ${PAIR_DEFAULT_PORT}`);
    // With port 0 the config names the preferred port; the override decides, the file gets the real one.
    const config = parseConfig(configYaml(dataDir, port === 0 ? preferred : port, engines), "demo config", {
      homeDir: dir,
      hostName: DEMO_NODE_NAME,
    });
    return startNode({
      config,
      overrides: { port, clusterPort: 0 },
      seams: {
        ...(options.log === undefined ? {} : { log: options.log }),
        statusExtras: { config_file: join(dir, "pair.yaml") },
      },
    });
  };
  if (options.port !== undefined) return start(options.port);
  try {
    return await start(preferred);
  } catch (error) {
    if (!(error instanceof ListenError && error.code === "port_in_use")) throw error;
    return start(0);
  }
}

export async function startDemoSandbox(options: DemoSandboxOptions): Promise<DemoSandbox> {
  const dir = await mkdtemp(join(options.tmpDir, "pair-demo-"));
  const dataDir = join(dir, "data");
  const configFile = join(dir, "pair.yaml");
  const emulators: EngineEmulator[] = [];
  let node: RunningNode | undefined;
  const cleanUp = async () => {
    await node?.close(DEMO_GRACE_MS);
    await Promise.all(emulators.map((e) => e.close()));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const engines: DemoEngine[] = [];
    for (const spec of options.engines ?? DEMO_ENGINES) {
      const emulator = await startEngineEmulator({
        api: spec.api,
        name: `${spec.label} emulator`,
        models: spec.models.map((name) => ({ name, maxTokens: 24 })),
        tokenDelayMs: options.tokenDelayMs ?? 40,
      });
      emulators.push(emulator);
      const baseUrl = spec.api === "openai" ? `${emulator.url}/v1` : emulator.url;
      engines.push({ ...spec, baseUrl, port: emulator.port });
    }
    node = await startNodeOnDemoPort(options, dir, dataDir, engines);
    // The file the user points `pair jobs` at names the port the node really got.
    await writeFile(configFile, configYaml(dataDir, node.port, engines, node.cluster.port));
    const running = node;
    let closing: Promise<void> | undefined;
    return {
      url: running.url,
      port: running.port,
      nodeName: running.name,
      dir,
      configFile,
      dataDir,
      engines,
      models: [...running.inventory.models().keys()].sort(),
      close: () => (closing ??= cleanUp()),
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}
