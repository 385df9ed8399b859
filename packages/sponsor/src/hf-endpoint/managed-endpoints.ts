/**
 * The managed rented nodes of this sponsor: every `huggingface-endpoint` node with
 * `lifecycle.managed: true`. Owns the durable state in the data dir (`managed/ledger.db`, and one
 * `managed/<node>.db` hosting store per node), each node's Endpoints API client (its token read from
 * the credential store), and the periodic pass (`tick`) on the injected timer seam. Each node it
 * opens goes into the sponsor's registry (ManagedNodes), where routing and the admin API reach it.
 * Must not know: HTTP routing, dialects, the CLI, the credential store's platform.
 */

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { HuggingFaceEndpointsProvider, type EndpointsTransport } from "@pair/huggingface";
import type { Clock } from "@pair/provision";
import { SqliteHostingStore, SqliteLedgerStore } from "@pair/store";
import type { Dispatcher } from "undici";
import type { Redacted } from "@pair/cluster";
import type { CredentialRef, HuggingFaceEndpointNode, RentedNodeConfig } from "../config/index.js";
import { ManagedEndpoint, type ManagedAction, type ManagedView } from "./managed-endpoint.js";
import { ManagedLedger } from "../core/managed-ledger.js";
import { ManagedNodes, type ManagedActionName } from "../core/managed-node.js";
import { PresetIds } from "../core/managed-node-core.js";

export { PresetIds } from "../core/managed-node-core.js";
import { servesModel } from "../core/models-probe.js";
import { SYSTEM_RUNTIME } from "@pair/cluster";
import { NodePasses, type PassTiming } from "../core/node-passes.js";
import type { SharedLedger } from "../core/shared-ledger.js";

export interface ManagedEndpointsOptions extends PassTiming {
  readonly nodeName: string;
  /** This node's stable id (the controller id and owner tag derive from it). */
  readonly nodeId: string;
  readonly dataDir: string;
  readonly configured: readonly RentedNodeConfig[];
  /** Reads a node's token (the OS credential store); throws when the store fails. */
  readonly credentials: { get(ref: CredentialRef): Promise<Redacted<string> | undefined> };
  /** An Endpoints API client with this token (verified HTTPS, the configured base URLs). */
  readonly transportFor: (token: Redacted<string>) => EndpointsTransport;
  /** Verified HTTPS to endpoints' data planes (a woken endpoint's `/v1/models` is asked before use). */
  readonly dispatcher: Dispatcher;
  /** PAIR requests in flight on a rented node now. */
  readonly inFlight: (node: string) => number;
  /** The sponsor's ledger, shared with the other managers (default: this one opens its own). */
  readonly ledger?: SharedLedger;
  /** The sponsor's registry of managed nodes, shared by every manager (default: one of its own). */
  readonly registry?: ManagedNodes;
}

/** Which configured nodes PAIR manages. */
export function managedConfigs(configured: readonly RentedNodeConfig[]): HuggingFaceEndpointNode[] {
  return configured.filter(
    (c): c is HuggingFaceEndpointNode => c.provider === "huggingface-endpoint" && c.lifecycle.managed,
  );
}

export class ManagedEndpoints {
  readonly #o: ManagedEndpointsOptions;
  readonly #clock: Clock;
  readonly #passes: NodePasses;
  readonly #configs: HuggingFaceEndpointNode[];
  readonly #nodes = new Map<string, ManagedEndpoint>();
  readonly #problems = new Map<string, string>();
  #ledger: ManagedLedger | undefined;
  readonly #ids = new PresetIds();
  readonly #registry: ManagedNodes;

  constructor(options: ManagedEndpointsOptions) {
    this.#o = options;
    this.#registry = options.registry ?? new ManagedNodes();
    this.#clock = (options.runtime ?? SYSTEM_RUNTIME).clock;
    this.#passes = new NodePasses((options.runtime ?? SYSTEM_RUNTIME).timers, options.tickMs, () =>
      this.#nodes.values(),
    );
    this.#configs = managedConfigs(options.configured);
  }

  /** Open the stores, restore obligations, and run the first pass (adoption, reconciliation). */
  async start(): Promise<void> {
    if (this.#configs.length > 0) {
      const ledger = this.#ensureLedger();
      for (const config of this.#configs) {
        const node = await this.#open(config, this.#dir(), ledger, this.#ids);
        if (node !== undefined) this.#manage(node);
      }
      await this.tick();
    }
    this.#passes.schedule();
  }

  #dir(): string {
    const dir = join(this.#o.dataDir, "managed");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /** The ledger, opened at the first managed node (at start, or at the first `pair rented create`). */
  #ensureLedger(): ManagedLedger {
    if (this.#ledger !== undefined) return this.#ledger;
    const ledger = this.#o.ledger?.open() ?? this.#ownLedger(this.#dir());
    this.#ledger = ledger;
    return ledger;
  }

  /**
   * Manage a node added at run time (`pair rented create`): open its store (obligations restored if
   * any) and its Endpoints API client. Undefined (with the reason logged) when its token is missing.
   */
  async add(config: HuggingFaceEndpointNode): Promise<ManagedEndpoint | undefined> {
    if (this.#passes.stopped || this.#nodes.has(config.name)) return this.#nodes.get(config.name);
    const node = await this.#open(config, this.#dir(), this.#ensureLedger(), this.#ids);
    if (node === undefined) return undefined;
    this.#configs.push(config);
    this.#manage(node);
    return node;
  }

  #manage(node: ManagedEndpoint): void {
    this.#nodes.set(node.name, node);
    this.#registry.add(node);
  }

  /** Forget a node added at run time whose create was refused before anything was sent. */
  forget(name: string): void {
    this.#nodes.delete(name);
    this.#registry.delete(name);
    const at = this.#configs.findIndex((c) => c.name === name);
    if (at >= 0) this.#configs.splice(at, 1);
  }

  #ownLedger(dir: string): ManagedLedger {
    const ledgerStore = new SqliteLedgerStore({ path: join(dir, "ledger.db") });
    this.#passes.closers.push(() => ledgerStore.close());
    const ledger = new ManagedLedger(ledgerStore, this.#clock, `ledger-${this.#o.nodeId}`);
    ledger.sessionStarted();
    return ledger;
  }

  async #open(
    config: HuggingFaceEndpointNode,
    dir: string,
    ledger: ManagedLedger,
    ids: PresetIds,
  ): Promise<ManagedEndpoint | undefined> {
    const log = this.#o.log ?? (() => undefined);
    if (config.credential === undefined) return undefined;
    let token: Redacted<string> | undefined;
    try {
      token = await this.#o.credentials.get(config.credential);
    } catch (cause) {
      this.#problems.set(config.name, (cause as Error).message);
    }
    if (token === undefined) {
      this.#problems.set(config.name, this.#problems.get(config.name) ?? "no credential stored: not managed");
      log(`rented node ${config.name}: not managed: ${this.#problems.get(config.name)}`);
      return undefined;
    }
    const transport = this.#o.transportFor(token);
    this.#passes.closers.push(() => transport.close());
    const store = new SqliteHostingStore({ path: join(dir, `${config.name}.db`) });
    this.#passes.closers.push(() => store.close());
    const provider = new HuggingFaceEndpointsProvider({
      transport,
      namespace: config.endpoint.namespace,
      clock: this.#clock,
    });
    return new ManagedEndpoint({
      config,
      transport,
      provider,
      store,
      ledger,
      clock: this.#clock,
      ids,
      controllerId: `pair-${this.#o.nodeId}`,
      // One owner tag per rented node: each node's reconciliation takes an endpoint with its own
      // tag and no record for an orphan to stop, so two managed nodes in one namespace must not
      // share a tag (each would pause the other's endpoint).
      ownerTag: `pair-${this.#o.nodeId}-${config.name}`,
      timeZone: this.#o.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
      inFlight: () => this.#o.inFlight(config.name),
      sleep: (ms, signal) => this.#passes.sleep(ms, signal),
      pollMs: this.#o.pollMs ?? 1_000,
      passIntervalMs: this.#passes.intervalMs,
      servesModel: (url, models) => servesModel(this.#o.dispatcher, url, token, models),
      log,
    });
  }

  /** One pass over every node (joins a pass under way). */
  tick(): Promise<void> {
    return this.#passes.tick();
  }

  /** `pair rented pause|resume|delete NAME` (tests; the admin API goes through RentedNodes). */
  async act(name: string, action: ManagedActionName): Promise<ManagedAction> {
    const node = this.#nodes.get(name);
    if (node === undefined)
      return {
        ok: false,
        error: {
          code: "rented_node_ineligible",
          message:
            `rented node ${name} is not managed by PAIR` +
            (this.#problems.has(name)
              ? `: ${this.#problems.get(name)}`
              : " (lifecycle.managed: true manages it)"),
          node: name,
        },
      };
    return ManagedNodes.act(node, action);
  }

  view(name: string): ManagedView | undefined {
    return this.#nodes.get(name)?.view();
  }

  /** The node for tests and the admin API. */
  node(name: string): ManagedEndpoint | undefined {
    return this.#nodes.get(name);
  }

  /** Sponsor exit: pause every managed endpoint (bounded per node), then close the stores. */
  close(): Promise<void> {
    return this.#passes.close();
  }
}
