/**
 * The managed Runpod rented nodes of this sponsor: every `provider: runpod` node with a `pod:` section.
 * Owns each node's hosting store (`<data_dir>/managed/<node>.db`), its Runpod API client (the key read
 * from the OS credential store, verified HTTPS to `providers.runpod.api`), the readiness probe holding
 * the sponsor's copy of the vLLM key, and the periodic pass on the timer seam. Routing, the admin API
 * and `close()` reach a node through the sponsor's registry (ManagedNodes), beside the Hugging Face ones.
 * Must not know: HTTP routing, dialects, the CLI, the credential store's platform.
 */

import {
  HttpsRunpodTransport,
  HttpsVllmProbe,
  RedactedString,
  type ProxyUrlOf,
  type RunpodTransport,
} from "@pair/runpod";
import type { RentedNodeConfig, RunpodPodNode } from "../config/index.js";
import { OnDemandNodeSet, type OnDemandNodesOptions } from "../core/on-demand-nodes.js";
import { RunpodPodManagedNode } from "./runpod-pod-node.js";

export interface RunpodPodNodesOptions extends OnDemandNodesOptions {
  readonly configured: readonly RentedNodeConfig[];
  /** `providers.runpod.api` (PAIR appends /v2). */
  readonly apiBaseUrl: string;
  /** One more trusted CA (PEM) for the API and the pods' proxy; verification stays on. */
  readonly extraCaPem?: string;
  /** A pod's proxy base URL (default `https://{podId}-{port}.proxy.runpod.net`; an emulator's own). */
  readonly proxyUrl?: ProxyUrlOf;
}

/** Which configured nodes are Runpod pods PAIR creates on demand. */
export function runpodPodConfigs(configured: readonly RentedNodeConfig[]): RunpodPodNode[] {
  return configured.filter((c): c is RunpodPodNode => c.provider === "runpod" && "pod" in c);
}

export class RunpodPodNodes {
  readonly #o: RunpodPodNodesOptions;
  readonly #set: OnDemandNodeSet<RunpodPodNode, RunpodPodManagedNode>;

  constructor(options: RunpodPodNodesOptions) {
    this.#o = options;
    this.#set = new OnDemandNodeSet<RunpodPodNode, RunpodPodManagedNode>(
      options,
      runpodPodConfigs(options.configured),
      (config) => [config.pod.model],
    );
  }

  /** Open the stores and clients, then the first pass (adoption of our pods, reconciliation). */
  start(): Promise<void> {
    return this.#set.start((config, dir) => this.#open(config, dir));
  }

  /** A node's clients and store (what throws here fails the start); undefined when a key is missing. */
  async #open(config: RunpodPodNode, dir: string): Promise<RunpodPodManagedNode | undefined> {
    const set = this.#set;
    const apiKey = await set.read(config, config.credential, "the Runpod API key (credential)");
    const vllmKey = await set.read(config, config.vllmApiKey, "the vLLM key (vllm_api_key)");
    if (apiKey === undefined || vllmKey === undefined) return undefined;
    const ca = this.#o.extraCaPem === undefined ? {} : { extraCaPem: this.#o.extraCaPem };
    const transport: RunpodTransport & { close(): Promise<void> } = new HttpsRunpodTransport({
      baseUrl: this.#o.apiBaseUrl,
      apiKey: new RedactedString(apiKey.reveal(), "Runpod API key"),
      ...ca,
      // Retry-After windows run on the node's wall clock (the system's; a test's virtual one).
      now: () => set.clock.now().wallMs,
    });
    set.passes.closers.push(() => transport.close());
    const probe = new HttpsVllmProbe({ apiKey: new RedactedString(vllmKey.reveal(), "vLLM key"), ...ca });
    set.passes.closers.push(() => probe.close());
    return new RunpodPodManagedNode({
      ...set.nodeOptions(config, dir),
      config,
      transport,
      probe,
      vllmKey,
      ...(this.#o.proxyUrl === undefined ? {} : { proxyUrl: this.#o.proxyUrl }),
    });
  }

  has(name: string): boolean {
    return this.#set.nodes.has(name);
  }

  node(name: string): RunpodPodManagedNode | undefined {
    return this.#set.nodes.get(name);
  }

  /** One pass over every node (joins a pass under way). */
  tick(): Promise<void> {
    return this.#set.passes.tick();
  }

  /** Sponsor exit: terminate every pod (bounded per node), then close stores and clients. */
  close(): Promise<void> {
    return this.#set.passes.close();
  }
}
