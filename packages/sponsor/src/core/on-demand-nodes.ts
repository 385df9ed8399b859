/**
 * What the managers of on-demand rented nodes (Runpod pods, Hugging Face Jobs) keep the same way: the
 * configured nodes, those opened (by name) and why the others could not open (a credential missing, …),
 * the folder of their hosting stores (`<data_dir>/managed`, one `<node>.db` each, opened here with the
 * rest of what every node is handed), the periodic pass and the exit close (NodePasses), and the
 * routing hooks over them. The manager says how one node opens (its provider's clients).
 * Must not know: which provider the nodes run on, HTTP routing, the credential store's platform.
 */

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Clock } from "@pair/provision";
import { SqliteHostingStore } from "@pair/store";
import type { Redacted } from "@pair/cluster";
import type { CredentialRef } from "../config/index.js";
import type { OnDemandNodeOptions } from "./managed-node-core.js";
import { PresetIds } from "./managed-node-core.js";
import { SYSTEM_RUNTIME } from "@pair/cluster";
import { NodePasses, type PassingNode, type PassTiming } from "./node-passes.js";
import { ManagedNodes, type ManagedRentedNode } from "./managed-node.js";
import { credentialUnavailable, readNodeCredential } from "./node-credentials.js";
import type { CredentialReader, ManagedStatus } from "./managed-node.js";
import type { SharedLedger } from "./shared-ledger.js";

/** What a manager of on-demand nodes is given, whichever provider they run on. */
export interface OnDemandNodesOptions extends PassTiming {
  /** This node's stable id (owner tags derive from it). */
  readonly nodeId: string;
  readonly dataDir: string;
  readonly credentials: CredentialReader;
  readonly ledger: SharedLedger;
  readonly inFlight: (node: string) => number;
  /** The sponsor's registry of managed nodes, shared by every manager (default: one of its own). */
  readonly registry?: ManagedNodes;
}

/** How a manager opens one node in `dir`: undefined (the reason in `problems`) when it cannot. */
export type OpenNode<C, N> = (config: C, dir: string) => Promise<N | undefined>;

export class OnDemandNodeSet<C extends { readonly name: string }, N extends ManagedRentedNode & PassingNode> {
  readonly nodes = new Map<string, N>();
  /** Why a configured node is not managed (its credential or a secret is missing, …). */
  readonly problems = new Map<string, string>();
  readonly configs: C[];
  readonly clock: Clock;
  readonly passes: NodePasses;
  readonly log: (line: string) => void;
  readonly registry: ManagedNodes;
  readonly #o: OnDemandNodesOptions;
  readonly #modelsOf: (config: C) => readonly string[];
  readonly #ids = new PresetIds();

  /** `modelsOf`: the models a configured node that could not open shows, with the reason. */
  constructor(options: OnDemandNodesOptions, configs: C[], modelsOf: (config: C) => readonly string[]) {
    this.#o = options;
    this.configs = configs;
    this.#modelsOf = modelsOf;
    this.clock = (options.runtime ?? SYSTEM_RUNTIME).clock;
    this.log = options.log ?? (() => undefined);
    this.registry = options.registry ?? new ManagedNodes();
    this.passes = new NodePasses((options.runtime ?? SYSTEM_RUNTIME).timers, options.tickMs, () =>
      this.nodes.values(),
    );
  }

  /** Open every configured node, then the first pass (adoption, reconciliation) and the periodic ones. */
  async start(open: OpenNode<C, N>): Promise<void> {
    if (this.configs.length === 0) return;
    for (const config of this.configs) await this.open(config, open);
    await this.passes.tick();
    this.passes.schedule();
  }

  /** Open one node; undefined when it cannot (the reason kept in `problems` and logged). */
  async open(config: C, open: OpenNode<C, N>): Promise<N | undefined> {
    const dir = join(this.#o.dataDir, "managed");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.problems.delete(config.name);
    const node = await open(config, dir);
    if (node !== undefined) {
      this.nodes.set(config.name, node);
      this.registry.add(node);
    } else {
      // A node added at run time (not yet among the configured) is not shown when it cannot open.
      const configured = this.configs.some((c) => c.name === config.name);
      this.registry.unopened(config.name, configured ? this.#unmanaged(config) : undefined);
      this.log(`rented node ${config.name}: not managed: ${this.problems.get(config.name) ?? "?"}`);
    }
    return node;
  }

  /** Read a credential of `config`; undefined (the reason in `problems`) when it is missing. */
  read(config: C, ref: CredentialRef | undefined, what: string): Promise<Redacted<string> | undefined> {
    return readNodeCredential(this.#o.credentials, this.problems, config.name, ref, what);
  }

  /**
   * What every node is handed besides its provider's clients: its hosting store in `dir` (closed at
   * exit, after the clients opened before it), the shared ledger, clock, ids, timers and log.
   */
  nodeOptions(config: C, dir: string): OnDemandNodeOptions {
    const store = new SqliteHostingStore({ path: join(dir, `${config.name}.db`) });
    this.passes.closers.push(() => store.close());
    return {
      ownerTag: `pair-${this.#o.nodeId}-${config.name}`,
      store,
      ledger: this.#o.ledger.open(),
      clock: this.clock,
      ids: this.#ids,
      timeZone: this.#o.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
      inFlight: () => this.#o.inFlight(config.name),
      sleep: (ms, signal) => this.passes.sleep(ms, signal),
      pollMs: this.#o.pollMs ?? 1_000,
      passIntervalMs: this.passes.intervalMs,
      log: this.log,
    };
  }

  /** Forget a node added at run time whose create was refused before anything was sent. */
  forget(name: string): void {
    this.nodes.delete(name);
    this.registry.delete(name);
    const at = this.configs.findIndex((c) => c.name === name);
    if (at >= 0) this.configs.splice(at, 1);
  }

  /** A configured node that could not be opened (a credential missing): shown with the reason. */
  #unmanaged(config: C): ManagedStatus | undefined {
    return credentialUnavailable(this.problems, config.name, this.#modelsOf(config));
  }
}
