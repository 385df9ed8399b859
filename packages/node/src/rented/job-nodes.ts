/**
 * The managed Hugging Face Jobs rented nodes of this sponsor: every `provider: huggingface-job` node
 * with a `job:` section. Owns each node's hosting store (`<data_dir>/managed/<node>.db`), its Jobs API
 * client (the HF token read from the OS credential store, verified HTTPS to `providers.huggingface
 * .hub_api`), the namespace (the token's user, from whoami), the Job secrets (read from the store),
 * the exposed-port probe, and the periodic pass on the timer seam. Routing, the admin API and
 * `close()` reach a node by name; `combineManagedHooks` puts these beside the other managers. A node
 * `pair rented create` made is added at run time (`add`) and, after a restart, comes back from
 * `<data_dir>/rented-nodes.json` (`created`), its job found again by the record in its store.
 * Must not know: HTTP routing, dialects, the CLI, the credential store's platform.
 */

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  HfToken,
  HttpsJobsTransport,
  httpsPortProbe,
  type RetryAfterGate,
  type RevealableToken,
} from "@pair/huggingface";
import type { Clock } from "@pair/provision";
import { SqliteHostingStore } from "@pair/store";
import type { Redacted } from "../cluster/index.js";
import type { CredentialRef, HuggingFaceJobNode, RentedNodeConfig } from "../config/index.js";
import { JobManagedNode } from "./job-node.js";
import { PresetIds, SYSTEM_CLOCK, SYSTEM_TIMERS, type TimerSeam } from "./managed-endpoints.js";
import type { ManagedHooks, ManagedStatus } from "./rented-nodes.js";
import { credentialUnavailable, onDemandHooks, readNodeCredential } from "./on-demand-hooks.js";
import type { SharedLedger } from "./shared-ledger.js";

export interface JobNodesOptions {
  /** This node's stable id (owner tags derive from it). */
  readonly nodeId: string;
  readonly dataDir: string;
  readonly configured: readonly RentedNodeConfig[];
  /** Nodes `pair rented create` made earlier (from rented-nodes.json): managed like the configured. */
  readonly created?: readonly RentedNodeConfig[];
  readonly credentials: { get(ref: CredentialRef): Promise<Redacted<string> | undefined> };
  /** `providers.huggingface.hub_api` (Jobs live under /api/jobs there). */
  readonly hubApi: string;
  /** One more trusted CA (PEM) for the API and the exposed ports; verification stays on. */
  readonly extraCaPem?: string;
  /** The sponsor's one Hugging Face retry-after window (shared with its Endpoints clients). */
  readonly gate?: RetryAfterGate;
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

/** Which configured nodes are Jobs PAIR runs on demand. */
export function jobNodeConfigs(configured: readonly RentedNodeConfig[]): HuggingFaceJobNode[] {
  return configured.filter(
    (c): c is HuggingFaceJobNode => c.provider === "huggingface-job" && "job" in c && c.lifecycle.managed,
  );
}

export class JobNodes {
  readonly #o: JobNodesOptions;
  readonly #clock: Clock;
  readonly #timers: TimerSeam;
  readonly #configs: HuggingFaceJobNode[];
  readonly #nodes = new Map<string, JobManagedNode>();
  readonly #problems = new Map<string, string>();
  readonly #closers: (() => Promise<void> | void)[] = [];
  readonly #createdNames: Set<string>;
  readonly #ids = new PresetIds();
  #timer: { cancel(): void } | undefined;
  #pass: Promise<void> | undefined;
  #stopped = false;

  constructor(options: JobNodesOptions) {
    this.#o = options;
    this.#clock = options.clock ?? SYSTEM_CLOCK;
    this.#timers = options.timers ?? SYSTEM_TIMERS;
    const created = jobNodeConfigs(options.created ?? []);
    this.#createdNames = new Set(created.map((c) => c.name));
    const configured = jobNodeConfigs(options.configured);
    const taken = new Set(configured.map((c) => c.name));
    this.#configs = [...configured, ...created.filter((c) => !taken.has(c.name))];
  }

  /** Open the stores and clients, then the first pass (adoption of our jobs, reconciliation). */
  async start(): Promise<void> {
    if (this.#configs.length === 0) return;
    for (const config of this.#configs) await this.#openNode(config);
    await this.tick();
    this.#schedule();
  }

  /**
   * Manage a node `pair rented create` adds at run time: open its store (records restored if any),
   * its Jobs API client and probe. Undefined (the reason in `problem(name)`) when its token is missing.
   */
  async add(config: HuggingFaceJobNode): Promise<JobManagedNode | undefined> {
    if (this.#stopped || this.#nodes.has(config.name)) return this.#nodes.get(config.name);
    this.#createdNames.add(config.name);
    const node = await this.#openNode(config);
    if (node === undefined) return undefined;
    this.#configs.push(config);
    if (this.#timer === undefined) this.#schedule();
    return node;
  }

  /** Forget a node added at run time whose create was refused before anything was sent. */
  forget(name: string): void {
    this.#nodes.delete(name);
    this.#createdNames.delete(name);
    const at = this.#configs.findIndex((c) => c.name === name);
    if (at >= 0) this.#configs.splice(at, 1);
  }

  /** Why a node is not managed (its token or a secret is missing, …). */
  problem(name: string): string | undefined {
    return this.#problems.get(name);
  }

  async #openNode(config: HuggingFaceJobNode): Promise<JobManagedNode | undefined> {
    const dir = join(this.#o.dataDir, "managed");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.#problems.delete(config.name);
    const node = await this.#open(config, dir, this.#ids).catch((cause: unknown) => {
      this.#problems.set(config.name, (cause as Error).message);
      return undefined;
    });
    if (node !== undefined) this.#nodes.set(config.name, node);
    else this.#log(`rented node ${config.name}: not managed: ${this.#problems.get(config.name) ?? "?"}`);
    return node;
  }

  async #open(config: HuggingFaceJobNode, dir: string, ids: PresetIds): Promise<JobManagedNode | undefined> {
    const token = await this.#read(config, config.credential, "the Hugging Face token (credential)");
    if (token === undefined) return undefined;
    const secrets: Record<string, RevealableToken> = {};
    for (const [name, ref] of Object.entries(config.job.secrets)) {
      const value = await this.#read(config, ref, `the Job secret ${name}`);
      if (value === undefined) return undefined;
      secrets[name] = new HfToken(value.reveal());
    }
    const ca = this.#o.extraCaPem === undefined ? {} : { extraCaPem: this.#o.extraCaPem };
    const hfToken = new HfToken(token.reveal());
    const transport = new HttpsJobsTransport({
      token: hfToken,
      hubApi: this.#o.hubApi,
      ...ca,
      ...(this.#o.gate === undefined ? {} : { gate: this.#o.gate }),
    });
    this.#closers.push(() => transport.close());
    const namespace = (await transport.whoami()).name;
    const prober = httpsPortProbe({ token: hfToken, ...ca });
    this.#closers.push(() => prober.close());
    const store = new SqliteHostingStore({ path: join(dir, `${config.name}.db`) });
    this.#closers.push(() => store.close());
    return new JobManagedNode({
      config,
      ownerTag: `pair-${this.#o.nodeId}-${config.name}`,
      namespace,
      transport,
      token: hfToken,
      secrets,
      probe: prober.probe,
      store,
      ledger: this.#o.ledger.open(),
      clock: this.#clock,
      ids,
      timeZone: this.#o.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
      inFlight: () => this.#o.inFlight(config.name),
      sleep: (ms, signal) => this.#sleep(ms, signal),
      pollMs: this.#o.pollMs ?? 1_000,
      log: (line) => this.#log(line),
      createdByPair: this.#createdNames.has(config.name),
    });
  }

  #read(
    config: HuggingFaceJobNode,
    ref: CredentialRef | undefined,
    what: string,
  ): Promise<Redacted<string> | undefined> {
    return readNodeCredential(this.#o.credentials, this.#problems, config.name, ref, what);
  }

  has(name: string): boolean {
    return this.#nodes.has(name);
  }

  node(name: string): JobManagedNode | undefined {
    return this.#nodes.get(name);
  }

  /** One pass over every node (joins a pass under way). */
  tick(): Promise<void> {
    this.#pass ??= Promise.all([...this.#nodes.values()].map((n) => n.tick())).then(() => {
      this.#pass = undefined;
    });
    return this.#pass;
  }

  /** Sponsor exit: cancel every job (bounded per node), then close stores and clients. */
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

  /** A configured job node that could not be opened (its token or a Job secret missing): shown with the reason. */
  #unmanaged(name: string): ManagedStatus | undefined {
    const config = this.#configs.find((c) => c.name === name);
    return credentialUnavailable(this.#problems, name, config === undefined ? undefined : [config.job.repo]);
  }

  #log(line: string): void {
    (this.#o.log ?? (() => undefined))(line);
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
