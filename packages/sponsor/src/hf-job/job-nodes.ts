/**
 * The managed Hugging Face Jobs rented nodes of this sponsor: every `provider: huggingface-job` node
 * with a `job:` section. Owns each node's hosting store (`<data_dir>/managed/<node>.db`), its Jobs API
 * client (the HF token read from the OS credential store, verified HTTPS to `providers.huggingface
 * .hub_api`), the namespace (the token's user, from whoami), the Job secrets (read from the store),
 * the exposed-port probe, and the periodic pass on the timer seam. Routing, the admin API and
 * `close()` reach a node through the sponsor's registry (ManagedNodes), beside the other managers'. A node
 * `pair rented create` made is added at run time (`add`) and, after a restart, comes back from
 * `<data_dir>/rented-nodes.json` (`created`), its job found again by the record in its store.
 * Must not know: HTTP routing, dialects, the CLI, the credential store's platform.
 */

import {
  HfToken,
  HttpsJobsTransport,
  httpsPortProbe,
  type RetryAfterGate,
  type RevealableToken,
} from "@pair/huggingface";
import type { HuggingFaceJobNode, RentedNodeConfig } from "../config/index.js";
import { JobManagedNode } from "./job-node.js";
import { OnDemandNodeSet, type OnDemandNodesOptions } from "../core/on-demand-nodes.js";

export interface JobNodesOptions extends OnDemandNodesOptions {
  readonly configured: readonly RentedNodeConfig[];
  /** Nodes `pair rented create` made earlier (from rented-nodes.json): managed like the configured. */
  readonly created?: readonly RentedNodeConfig[];
  /** `providers.huggingface.hub_api` (Jobs live under /api/jobs there). */
  readonly hubApi: string;
  /** One more trusted CA (PEM) for the API and the exposed ports; verification stays on. */
  readonly extraCaPem?: string;
  /** The sponsor's one Hugging Face retry-after window (shared with its Endpoints clients). */
  readonly gate?: RetryAfterGate;
}

/** Which configured nodes are Jobs PAIR runs on demand. */
export function jobNodeConfigs(configured: readonly RentedNodeConfig[]): HuggingFaceJobNode[] {
  return configured.filter(
    (c): c is HuggingFaceJobNode => c.provider === "huggingface-job" && "job" in c && c.lifecycle.managed,
  );
}

export class JobNodes {
  readonly #o: JobNodesOptions;
  readonly #set: OnDemandNodeSet<HuggingFaceJobNode, JobManagedNode>;
  readonly #createdNames: Set<string>;

  constructor(options: JobNodesOptions) {
    this.#o = options;
    const created = jobNodeConfigs(options.created ?? []);
    this.#createdNames = new Set(created.map((c) => c.name));
    const configured = jobNodeConfigs(options.configured);
    const taken = new Set(configured.map((c) => c.name));
    const configs = [...configured, ...created.filter((c) => !taken.has(c.name))];
    this.#set = new OnDemandNodeSet<HuggingFaceJobNode, JobManagedNode>(options, configs, (config) => [
      config.job.repo,
    ]);
  }

  /** Open the stores and clients, then the first pass (adoption of our jobs, reconciliation). */
  start(): Promise<void> {
    return this.#set.start((config, dir) => this.#open(config, dir));
  }

  /**
   * Manage a node `pair rented create` adds at run time: open its store (records restored if any),
   * its Jobs API client and probe. Undefined (the reason in `problem(name)`) when its token is missing.
   */
  async add(config: HuggingFaceJobNode): Promise<JobManagedNode | undefined> {
    const set = this.#set;
    if (set.passes.stopped || set.nodes.has(config.name)) return set.nodes.get(config.name);
    this.#createdNames.add(config.name);
    const node = await set.open(config, (c, dir) => this.#open(c, dir));
    if (node === undefined) return undefined;
    set.configs.push(config);
    if (!set.passes.scheduled) set.passes.schedule();
    return node;
  }

  /** Forget a node added at run time whose create was refused before anything was sent. */
  forget(name: string): void {
    this.#set.forget(name);
    this.#createdNames.delete(name);
  }

  /** Why a node is not managed (its token or a secret is missing, …). */
  problem(name: string): string | undefined {
    return this.#set.problems.get(name);
  }

  /** A node's clients and store; what throws (whoami, a store) leaves it unmanaged with the reason. */
  #open(config: HuggingFaceJobNode, dir: string): Promise<JobManagedNode | undefined> {
    return this.#openClients(config, dir).catch((cause: unknown) => {
      this.#set.problems.set(config.name, (cause as Error).message);
      return undefined;
    });
  }

  async #openClients(config: HuggingFaceJobNode, dir: string): Promise<JobManagedNode | undefined> {
    const set = this.#set;
    const token = await set.read(config, config.credential, "the Hugging Face token (credential)");
    if (token === undefined) return undefined;
    const secrets: Record<string, RevealableToken> = {};
    for (const [name, ref] of Object.entries(config.job.secrets)) {
      const value = await set.read(config, ref, `the Job secret ${name}`);
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
    set.passes.closers.push(() => transport.close());
    const namespace = (await transport.whoami()).name;
    const prober = httpsPortProbe({ token: hfToken, ...ca });
    set.passes.closers.push(() => prober.close());
    return new JobManagedNode({
      ...set.nodeOptions(config, dir),
      config,
      namespace,
      transport,
      token: hfToken,
      secrets,
      probe: prober.probe,
      createdByPair: this.#createdNames.has(config.name),
    });
  }

  has(name: string): boolean {
    return this.#set.nodes.has(name);
  }

  node(name: string): JobManagedNode | undefined {
    return this.#set.nodes.get(name);
  }

  /** One pass over every node (joins a pass under way). */
  tick(): Promise<void> {
    return this.#set.passes.tick();
  }

  /** Sponsor exit: cancel every job (bounded per node), then close stores and clients. */
  close(): Promise<void> {
    return this.#set.passes.close();
  }
}
