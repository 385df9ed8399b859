/**
 * The managed Runpod rented nodes of this sponsor: every `provider: runpod` node with a `pod:` section.
 * Owns each node's hosting store (`<data_dir>/managed/<node>.db`), its Runpod API client (the key read
 * from the OS credential store, verified HTTPS to `providers.runpod.api`), the readiness probe holding
 * the sponsor's copy of the vLLM key, and the periodic pass on the timer seam. Routing, the admin API
 * and `close()` reach a node by name; `combineManagedHooks` puts these beside the Hugging Face ones.
 * Must not know: HTTP routing, dialects, the CLI, the credential store's platform.
 */

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Clock } from "@pair/provision";
import {
  HttpsRunpodTransport,
  HttpsVllmProbe,
  RedactedString,
  type ProxyUrlOf,
  type RunpodTransport,
} from "@pair/runpod";
import { SqliteHostingStore } from "@pair/store";
import type { Redacted } from "../cluster/index.js";
import type { CredentialRef, RentedNodeConfig, RunpodPodNode } from "../config/index.js";
import { PresetIds, SYSTEM_CLOCK, SYSTEM_TIMERS, type TimerSeam } from "./managed-endpoints.js";
import type { ManagedHooks, ManagedStatus } from "./rented-nodes.js";
import { RunpodPodManagedNode } from "./runpod-pod-node.js";
import { credentialUnavailable, onDemandHooks, readNodeCredential } from "./on-demand-hooks.js";
import type { SharedLedger } from "./shared-ledger.js";

export interface RunpodPodNodesOptions {
  /** This node's stable id (owner tags derive from it). */
  readonly nodeId: string;
  readonly dataDir: string;
  readonly configured: readonly RentedNodeConfig[];
  readonly credentials: { get(ref: CredentialRef): Promise<Redacted<string> | undefined> };
  /** `providers.runpod.api` (PAIR appends /v2). */
  readonly apiBaseUrl: string;
  /** One more trusted CA (PEM) for the API and the pods' proxy; verification stays on. */
  readonly extraCaPem?: string;
  /** A pod's proxy base URL (default `https://{podId}-{port}.proxy.runpod.net`; an emulator's own). */
  readonly proxyUrl?: ProxyUrlOf;
  readonly ledger: SharedLedger;
  readonly inFlight: (node: string) => number;
  readonly clock?: Clock;
  readonly timers?: TimerSeam;
  /** Time between passes (default 10 s); 0: no automatic pass (tests call `tick()`). */
  readonly tickMs?: number;
  /** How often a waiting request or an exit looks again (default 1 s). */
  readonly pollMs?: number;
  readonly timeZone?: string;
  readonly log?: (line: string) => void;
}

/** Which configured nodes are Runpod pods PAIR creates on demand. */
export function runpodPodConfigs(configured: readonly RentedNodeConfig[]): RunpodPodNode[] {
  return configured.filter((c): c is RunpodPodNode => c.provider === "runpod" && "pod" in c);
}

export class RunpodPodNodes {
  readonly #o: RunpodPodNodesOptions;
  readonly #clock: Clock;
  readonly #timers: TimerSeam;
  readonly #configs: RunpodPodNode[];
  readonly #nodes = new Map<string, RunpodPodManagedNode>();
  readonly #problems = new Map<string, string>();
  readonly #closers: (() => Promise<void> | void)[] = [];
  #timer: { cancel(): void } | undefined;
  #pass: Promise<void> | undefined;
  #stopped = false;

  constructor(options: RunpodPodNodesOptions) {
    this.#o = options;
    this.#clock = options.clock ?? SYSTEM_CLOCK;
    this.#timers = options.timers ?? SYSTEM_TIMERS;
    this.#configs = runpodPodConfigs(options.configured);
  }

  /** Open the stores and clients, then the first pass (adoption of our pods, reconciliation). */
  async start(): Promise<void> {
    if (this.#configs.length === 0) return;
    const dir = join(this.#o.dataDir, "managed");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const ids = new PresetIds();
    for (const config of this.#configs) {
      const node = await this.#open(config, dir, ids);
      if (node !== undefined) this.#nodes.set(config.name, node);
    }
    await this.tick();
    this.#schedule();
  }

  async #open(config: RunpodPodNode, dir: string, ids: PresetIds): Promise<RunpodPodManagedNode | undefined> {
    const log = this.#o.log ?? (() => undefined);
    const apiKey = await this.#read(config, config.credential, "the Runpod API key (credential)");
    const vllmKey = await this.#read(config, config.vllmApiKey, "the vLLM key (vllm_api_key)");
    if (apiKey === undefined || vllmKey === undefined) {
      log(`rented node ${config.name}: not managed: ${this.#problems.get(config.name) ?? "?"}`);
      return undefined;
    }
    const ca = this.#o.extraCaPem === undefined ? {} : { extraCaPem: this.#o.extraCaPem };
    const transport: RunpodTransport & { close(): Promise<void> } = new HttpsRunpodTransport({
      baseUrl: this.#o.apiBaseUrl,
      apiKey: new RedactedString(apiKey.reveal(), "Runpod API key"),
      ...ca,
      // Retry-After windows run on the node's wall clock (the system's; a test's virtual one).
      now: () => this.#clock.now().wallMs,
    });
    this.#closers.push(() => transport.close());
    const probe = new HttpsVllmProbe({ apiKey: new RedactedString(vllmKey.reveal(), "vLLM key"), ...ca });
    this.#closers.push(() => probe.close());
    const store = new SqliteHostingStore({ path: join(dir, `${config.name}.db`) });
    this.#closers.push(() => store.close());
    return new RunpodPodManagedNode({
      config,
      ownerTag: `pair-${this.#o.nodeId}-${config.name}`,
      transport,
      store,
      ledger: this.#o.ledger.open(),
      clock: this.#clock,
      ids,
      probe,
      vllmKey,
      ...(this.#o.proxyUrl === undefined ? {} : { proxyUrl: this.#o.proxyUrl }),
      timeZone: this.#o.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
      inFlight: () => this.#o.inFlight(config.name),
      sleep: (ms, signal) => this.#sleep(ms, signal),
      pollMs: this.#o.pollMs ?? 1_000,
      log,
    });
  }

  #read(
    config: RunpodPodNode,
    ref: CredentialRef | undefined,
    what: string,
  ): Promise<Redacted<string> | undefined> {
    return readNodeCredential(this.#o.credentials, this.#problems, config.name, ref, what);
  }

  has(name: string): boolean {
    return this.#nodes.has(name);
  }

  node(name: string): RunpodPodManagedNode | undefined {
    return this.#nodes.get(name);
  }

  /** One pass over every node (joins a pass under way). */
  tick(): Promise<void> {
    this.#pass ??= Promise.all([...this.#nodes.values()].map((n) => n.tick())).then(() => {
      this.#pass = undefined;
    });
    return this.#pass;
  }

  /** Sponsor exit: terminate every pod (bounded per node), then close stores and clients. */
  async close(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    await this.#pass?.catch(() => undefined);
    await Promise.all([...this.#nodes.values()].map((n) => n.close().catch(() => 1)));
    for (const close of this.#closers.splice(0).reverse()) await close();
  }

  /** The routing hooks of these nodes. */
  hooks(): ManagedHooks {
    return onDemandHooks(this.#nodes, this.#problems, (name) => this.#unmanaged(name));
  }

  /** A configured pod node that could not be opened (a key missing): shown with the reason. */
  #unmanaged(name: string): ManagedStatus | undefined {
    const config = this.#configs.find((c) => c.name === name);
    return credentialUnavailable(this.#problems, name, config === undefined ? undefined : [config.pod.model]);
  }

  #schedule(): void {
    const tickMs = this.#o.tickMs ?? 10_000;
    if (this.#stopped || tickMs <= 0) return;
    this.#timer = this.#timers.setTimeout(() => {
      void this.tick().finally(() => this.#schedule());
    }, tickMs);
  }

  #sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted === true) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => {
        timer.cancel();
        resolve(false);
      };
      const timer = this.#timers.setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve(true);
      }, ms);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}

/**
 * Every manager's nodes (Hugging Face endpoints, Runpod pods, Hugging Face Jobs) behind one set of
 * routing hooks: each node belongs to one manager; a name no later one has goes to the first.
 */
export function combineManagedHooks(first: ManagedHooks, ...rest: readonly ManagedHooks[]): ManagedHooks {
  const pick = (name: string) => rest.find((h) => h.has(name) || h.status?.(name) !== undefined) ?? first;
  return {
    has: (name) => first.has(name) || rest.some((h) => h.has(name)),
    wakeable: (name) => pick(name).wakeable(name),
    budgetRefusal: (name) => pick(name).budgetRefusal(name),
    act: (name, action) => pick(name).act(name, action),
    prepare: (name, signal) => pick(name).prepare(name, signal),
    view: (name) => pick(name).view(name),
    status: (name) => pick(name).status?.(name),
    headers: (name) => pick(name).headers?.(name),
    created: (name) => pick(name).created?.(name) ?? null,
    routingUse: (name) => pick(name).routingUse?.(name),
  };
}
