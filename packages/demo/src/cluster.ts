/**
 * The two-node sandbox of `pair demo`, on loopback: an emulated Hugging Face account (control and data
 * plane over HTTPS, its leaf from the demo's throwaway CA) holding one private endpoint; node A, the
 * sponsor, with a local engine and that endpoint as the managed rented node `gpu-hf`; node B, a peer
 * with a local engine; A and B paired through the real PIN flow (A shows a PIN, B joins with it).
 * A reads its token from the sandbox credential source (credentials.ts), never the OS store.
 * Time: the endpoint's world and A's managed lifecycle run on the emulator's virtual clock, moved by
 * `advance`/`drive` (the tour) or `runClock` (afterwards, scaled). `restartSponsor` is the user's
 * "edit the config, restart pair serve" on the same ports and data dir. `close` ends it all.
 * Must not know: what the tour checks or prints.
 */

import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  startEngineEmulator,
  startHuggingFaceEmulator,
  type EngineEmulator,
  type HuggingFaceEmulator,
} from "@pair/emulators";
import { HfToken, HttpsEndpointsTransport, vllmImage } from "@pair/huggingface";
import { parseConfig, Redacted, startNode, withWallClock, type EventLog, type RunningNode } from "@pair/node";
import { createDemoCa } from "./ca.js";
import {
  DEMO_HF_ENDPOINT,
  DEMO_HF_MODEL,
  DEMO_SCALE_TO_ZERO_MIN,
  peerYaml,
  sponsorYaml,
  START_SETTINGS,
  type SponsorFiles,
  type SponsorSettings,
} from "./cluster-config.js";
import { demoCredentialRef, DemoSandboxCredentials } from "./credentials.js";
import { adminCall } from "./http.js";

const GRACE_MS = 1_000;

export interface DemoClusterNode {
  readonly name: string;
  readonly configFile: string;
  readonly dataDir: string;
  /** Every line the node logged. */
  readonly log: string[];
  node: RunningNode;
}

export interface DemoCluster {
  readonly dir: string;
  readonly hf: HuggingFaceEmulator;
  /** The sponsor (A) and the peer (B). `a.node` changes on each restart. */
  readonly a: DemoClusterNode;
  readonly b: DemoClusterNode;
  /** The emulated account's token: only for checking that it leaked nowhere. */
  readonly token: Redacted<string>;
  /** Account names of the sandbox credentials: the good token and a wrong one. */
  readonly credentials: { readonly hf: string; readonly wrong: string };
  /** The demo CA (what A trusts), for the tour's own HTTPS calls to the emulated Hugging Face. */
  readonly caPem: string;
  /** The emulated account's Endpoints API as the `hf` CLI would use it (the account owner's side). */
  readonly hfApi: HttpsEndpointsTransport;
  settings: SponsorSettings;
  /** Stop A (pausing its endpoint when its config says so), leaving its files and ports. */
  stopSponsor(): Promise<void>;
  /** Start A again with these settings (after stopSponsor), then wait until B sees it. */
  startSponsor(settings: SponsorSettings): Promise<void>;
  restartSponsor(settings: SponsorSettings): Promise<void>;
  /** Move virtual time in steps, with a managed pass on A after each. */
  advance(ms: number, stepMs?: number): Promise<void>;
  /**
   * Move virtual time while `work` is pending (a cold start, a wake): `stepMs` (default 5 s) every
   * ~15 real ms, at most `maxVirtualMs` (default 30 min); `each` runs after every step.
   */
  drive<T>(
    work: Promise<T>,
    options?: { stepMs?: number; maxVirtualMs?: number; each?: () => void },
  ): Promise<T>;
  /** From now on virtual time runs `scale`× real time by itself (until close). */
  runClock(scale: number): void;
  close(): Promise<void>;
}

export interface DemoClusterOptions {
  readonly tmpDir: string;
  /** Client ports of A and B (0: any free port). */
  readonly ports?: { readonly a: number; readonly b: number };
  readonly log?: EventLog;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function ollama(name: string, model: string): Promise<EngineEmulator> {
  return startEngineEmulator({
    api: "ollama",
    name: `${name} Ollama emulator`,
    models: [{ name: model, maxTokens: 12 }],
    tokenDelayMs: 20,
  });
}

export async function startDemoCluster(options: DemoClusterOptions): Promise<DemoCluster> {
  const dir = await mkdtemp(join(options.tmpDir, "pair-demo-"));
  const closers: (() => Promise<unknown>)[] = [];
  let clock: ReturnType<typeof setInterval> | undefined;
  const cleanUp = async () => {
    if (clock !== undefined) clearInterval(clock);
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const ca = await createDemoCa();
    const caFile = join(dir, "demo-ca.pem");
    await writeFile(caFile, ca.certPem);
    const token = new Redacted(`hf_${randomBytes(17).toString("hex")}`, "demo Hugging Face token");
    const wrong = new Redacted(`hf_${randomBytes(17).toString("hex")}`, "wrong demo token");
    const credentials = new DemoSandboxCredentials();
    credentials.set("hf", token);
    credentials.set("hf-wrong", wrong);
    const hf = await startHuggingFaceEmulator({
      tls: { key: ca.leaf.keyPem, cert: ca.leaf.certPem },
      tokens: { [token.reveal()]: { namespace: DEMO_HF_ENDPOINT.namespace } },
      // Virtual durations, as on Hugging Face: a cold start of 2 min 30 s (beyond the old 120 s limit).
      timings: { pendingMs: 30_000, initializingMs: 60_000, scaleUpMs: 150_000, updatingMs: 30_000 },
      engine: { tokenDelayMs: 20, maxTokens: 12 },
    });
    closers.push(() => hf.close());
    const api = new HttpsEndpointsTransport({
      token: new HfToken(token.reveal()),
      endpointsApi: hf.endpointsApiUrl,
      hubApi: hf.hubApiUrl,
      extraCaPem: ca.certPem,
    });
    closers.push(() => api.close());
    await api.createEndpoint(DEMO_HF_ENDPOINT.namespace, {
      name: DEMO_HF_ENDPOINT.name,
      accessType: "private",
      vendor: "aws",
      region: "us-east-1",
      accelerator: "gpu",
      instanceType: "nvidia-l4",
      instanceSize: "x1",
      minReplica: 0,
      maxReplica: 1,
      scaleToZeroTimeoutMin: DEMO_SCALE_TO_ZERO_MIN,
      repository: DEMO_HF_MODEL,
      // The engine PAIR itself deploys: it serves /v1 (HF's default Toolkit image does not).
      framework: "custom",
      image: vllmImage(),
    });

    const engineA = await ollama("A", "llama3.2:1b");
    closers.push(() => engineA.close());
    const engineB = await ollama("B", "qwen2.5:0.5b");
    closers.push(() => engineB.close());
    const localCopy = await startEngineEmulator({
      api: "openai",
      name: "A vLLM emulator",
      models: [{ name: DEMO_HF_MODEL, maxTokens: 30 }],
      tokenDelayMs: 50,
    });
    closers.push(() => localCopy.close());

    const filesA: SponsorFiles = {
      name: "node-a",
      dataDir: join(dir, "a", "data"),
      port: options.ports?.a ?? 0,
      clusterPort: 0,
      ollamaUrl: engineA.url,
      localCopyUrl: `${localCopy.url}/v1`,
      credential: demoCredentialRef("hf"),
      endpointsApi: hf.endpointsApiUrl,
      hubApi: hf.hubApiUrl,
      caFile,
    };
    const filesB = {
      name: "node-b",
      dataDir: join(dir, "b", "data"),
      port: options.ports?.b ?? 0,
      clusterPort: 0,
      ollamaUrl: engineB.url,
    };
    const logTo = (prefix: string, lines: string[]) => (line: string) => {
      lines.push(line);
      options.log?.(`${prefix} ${line}`);
    };
    const logA: string[] = [];
    const logB: string[] = [];
    const sponsorNode = async (settings: SponsorSettings): Promise<RunningNode> => {
      const text = sponsorYaml(filesA, settings);
      const node = await startNode({
        config: parseConfig(text, "node A config", { homeDir: dir, hostName: filesA.name }),
        overrides: {
          port: filesA.port,
          clusterPort: filesA.clusterPort,
          membership: { refreshMs: 300, timeoutMs: 1_000 },
          rentedProbeIntervalMs: 300,
        },
        seams: {
          credentials,
          log: logTo("A:", logA),
          statusExtras: { config_file: join(dir, "a", "pair.yaml") },
          // Billing, budgets and idle run on the emulator's virtual clock; monotonic time is real.
          runtime: withWallClock(() => hf.nowMs()),
          managed: {
            tickMs: 0,
            pollMs: 50,
            timeZone: "UTC",
          },
        },
      });
      Object.assign(filesA, { port: node.port, clusterPort: node.cluster.port });
      await writeFile(join(dir, "a", "pair.yaml"), sponsorYaml(filesA, settings));
      return node;
    };
    const a: DemoClusterNode = {
      name: filesA.name,
      configFile: join(dir, "a", "pair.yaml"),
      dataDir: filesA.dataDir,
      log: logA,
      node: await sponsorNode(START_SETTINGS),
    };
    let sponsorRunning = true;
    closers.push(() => (sponsorRunning ? a.node.close(GRACE_MS) : Promise.resolve()));
    const nodeB = await startNode({
      config: parseConfig(peerYaml(filesB), "node B config", { homeDir: dir, hostName: filesB.name }),
      overrides: {
        port: filesB.port,
        clusterPort: 0,
        membership: { refreshMs: 300, timeoutMs: 1_000 },
        // Bounds a forwarded request the demo's virtual time does not move (a cold start takes ~1 s real).
        peerFirstByteTimeoutMs: 30_000,
      },
      seams: {
        credentials: new DemoSandboxCredentials(), // B holds no credential at all
        log: logTo("B:", logB),
      },
    });
    closers.push(() => nodeB.close(GRACE_MS));
    await writeFile(
      join(dir, "b", "pair.yaml"),
      peerYaml({ ...filesB, port: nodeB.port, clusterPort: nodeB.cluster.port }),
    );
    const b: DemoClusterNode = {
      name: filesB.name,
      configFile: join(dir, "b", "pair.yaml"),
      dataDir: filesB.dataDir,
      log: logB,
      node: nodeB,
    };

    // Pairing through the real PIN flow: A shows a PIN (`pair pin`), B joins with it (`pair join`).
    const pin = await adminCall(a.node, "/pair/v1/pin", {});
    const pinValue = (pin.json as { pin?: unknown }).pin;
    if (pin.status !== 200 || typeof pinValue !== "string")
      throw new Error(`pair pin on A: HTTP ${pin.status}`);
    const joined = await adminCall(b.node, "/pair/v1/join", {
      address: `127.0.0.1:${a.node.cluster.port}`,
      pin: pinValue,
    });
    if (joined.status !== 200)
      throw new Error(`pair join on B: HTTP ${joined.status} ${JSON.stringify(joined.json)}`);
    const seesA = async () => {
      for (let i = 0; i < 200; i += 1) {
        const nodes = await adminCall(b.node, "/pair/v1/nodes");
        const rows = nodes.json as { name?: string; state?: string }[];
        if (Array.isArray(rows) && rows.some((r) => r.name === a.name && r.state === "up")) return;
        await sleep(50);
      }
      throw new Error("node B does not see node A up after 10 s");
    };
    await seesA();

    const cluster: DemoCluster = {
      dir,
      hf,
      a,
      b,
      token,
      credentials: { hf: "hf", wrong: "hf-wrong" },
      caPem: ca.certPem,
      hfApi: api,
      settings: START_SETTINGS,
      stopSponsor: async () => {
        sponsorRunning = false;
        await a.node.close(GRACE_MS);
      },
      startSponsor: async (settings) => {
        a.node = await sponsorNode(settings);
        sponsorRunning = true;
        cluster.settings = settings;
        await seesA();
      },
      restartSponsor: async (settings) => {
        await cluster.stopSponsor();
        await cluster.startSponsor(settings);
      },
      advance: async (ms, stepMs = 10_000) => {
        for (let t = 0; t < ms; t += stepMs) {
          hf.advance(Math.min(stepMs, ms - t));
          await a.node.managed.tick();
        }
      },
      drive: async (work, { stepMs = 5_000, maxVirtualMs = 30 * 60_000, each } = {}) => {
        let done = false;
        const finished = work.finally(() => void (done = true));
        for (let t = 0; !done && t < maxVirtualMs; t += stepMs) {
          await sleep(15);
          if (done) break;
          hf.advance(stepMs);
          await a.node.managed.tick();
          each?.();
        }
        return finished;
      },
      runClock: (scale) => {
        if (clock !== undefined) clearInterval(clock);
        let ticking = false;
        clock = setInterval(() => {
          hf.advance(200 * scale);
          if (ticking || !sponsorRunning) return;
          ticking = true;
          void a.node.managed.tick().finally(() => void (ticking = false));
        }, 200);
      },
      close: cleanUp,
    };
    return cluster;
  } catch (error) {
    await cleanUp();
    throw error;
  }
}
