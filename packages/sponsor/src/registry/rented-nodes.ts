/**
 * The rented nodes this node sponsors: from the config file and `pair rented attach`, with the run-time
 * share/policy switches applied. The sponsor alone holds each node's credential (read from the OS
 * credential store, kept in memory as a redacted value) and probes each node's `/v1/models` over
 * verified HTTPS: state, models, and a warning when it answers without a credential. What it tells
 * peers is the peer view (peer-view.ts): never a URL, never a credential. For routing it says which
 * rented nodes serve a model for a caller (a peer's request only reaches shared nodes), why one may
 * not (`rented_node_not_shared`, `rented_node_ineligible`), and how to reach one (URL + token headers,
 * the sponsor's outbound request only). Probing one node is rented-probe.ts; what is decided and shown
 * of one node, computed from its state, is rented-view.ts.
 * Must not know: the client API, dialects, how the forwarder relays, the credential store's platform.
 */

import type { TimerHandle, Timers } from "@pair/cluster";
import type { ProxyUrlOf } from "@pair/runpod";
import type { Dispatcher } from "undici";
import type { RentedConfigReader, RentedNodeConfig, RentedNodeProblem } from "../config/index.js";
import type { PairError } from "@pair/dialects";
import { readSavedEntry } from "./attached-configs.js";
import { estimateCostMicroUsd } from "../core/cost-estimate.js";
import type { EndpointLookupFn } from "./hf-endpoint-states.js";
import { USD } from "../core/managed-endpoint-view.js";
import { ManagedNodes, type ManagedActionName, type ManagedRentedNode } from "../core/managed-node.js";
import type { RentedPeerView } from "./peer-view.js";
import { readRentedFile, writeRentedFile, type RentedFile, type RentedOverride } from "./rented-file.js";
import {
  credentialRejectedReason,
  fresh,
  probeNode,
  type CredentialReader,
  type NodeState,
} from "./rented-probe.js";
import {
  nodeFacts,
  nodeView,
  peerViewOf,
  servingOf,
  type NodeFacts,
  type RentedNodeView,
  type RentedServingView,
} from "./rented-view.js";

export type { CredentialReader, ManagedStatus, RentedState } from "./rented-probe.js";
export type { RentedNodeView } from "./rented-view.js";

/** What the forwarder needs to send one request to a rented node. */
export interface RentedLink {
  readonly name: string;
  readonly baseUrl: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly coldStartMs: number;
  /** Requests sent to it at once (`max_concurrent`). */
  readonly maxConcurrent: number;
  /** Managed nodes: wake if paused and tell the base URL, before the request is sent. */
  readonly prepare?: (
    signal: AbortSignal,
  ) => Promise<{ ok: true; baseUrl: string } | { ok: false; error: PairError }>;
}

export interface RentedNodesOptions {
  readonly nodeName: string;
  /** Reads one entry by the config file's rules (the daemon's `readRentedNodeValue`). */
  readonly readConfig: RentedConfigReader;
  readonly dataDir: string;
  readonly configured: readonly RentedNodeConfig[];
  readonly credentials: CredentialReader;
  readonly dispatcher: Dispatcher;
  /** Time between probes (default 30 s). */
  readonly probeIntervalMs?: number;
  /** Longest a probe may take (default 10 s). */
  readonly probeTimeoutMs?: number;
  /** Hugging Face endpoints by name (the Endpoints API); absent: such nodes are unsupported. */
  readonly lookupEndpoint?: EndpointLookupFn;
  /** Every managed node (Hugging Face endpoints and Jobs, Runpod pods), by name; absent: none is managed. */
  readonly managed?: ManagedNodes;
  /** Runpod pods attached by id: their proxy base URL (`providers.runpod.proxy_url`; default Runpod's). */
  readonly runpodProxyUrl?: ProxyUrlOf;
  readonly log?: (line: string) => void;
  /** The probe schedule (the node's runtime). */
  readonly timers: Pick<Timers, "after">;
  /** Scrubs secrets from the detail the admin view shows (reason, last error, provider message). */
  readonly redact?: (text: string) => string;
}

/** A lifecycle action's answer: the node after it, or the PAIR error it failed with. */
export type RentedAction =
  | { readonly ok: true; readonly node: RentedNodeView }
  | {
      readonly ok: false;
      readonly error: PairError | { readonly code: "unknown_rented_node"; readonly message: string };
    };

/** Codes of a refused `attach`, `share` or `policy` (docs/errors.md). */
export const RENTED_CHANGE_CODES = [
  "unknown_rented_node",
  "invalid_value",
  "duplicate_name",
  "insecure_url",
  "literal_credential",
  "budget_required",
] as const;

export type RentedChange =
  | { readonly ok: true; readonly node: RentedNodeView }
  | {
      readonly ok: false;
      readonly code: (typeof RENTED_CHANGE_CODES)[number];
      readonly message: string;
      readonly problems?: readonly RentedNodeProblem[];
    };

export class RentedNodes {
  readonly #o: RentedNodesOptions;
  readonly #nodes = new Map<string, NodeState>();
  #file: RentedFile;
  #timer: TimerHandle | undefined;
  #round: Promise<void> | undefined;
  #stopped = false;

  constructor(options: RentedNodesOptions) {
    this.#o = options;
    this.#file = readRentedFile(options.dataDir);
    for (const config of options.configured) this.#nodes.set(config.name, fresh(config, "config"));
    for (const entry of this.#file.attached) {
      const read = readSavedEntry(entry, options.nodeName, options.readConfig);
      const name = typeof entry["name"] === "string" ? entry["name"] : "?";
      if (read.ok && read.legacyBudget === true)
        options.log?.(
          `rented node ${name} (attached): budget_required: it was saved without a budget, so it is held ` +
            "at a spent-out cap (paused, no wake) until you attach it again with --usd-per-day N or --unlimited",
        );
      if (!read.ok) {
        options.log?.(`rented node ${name} (attached): ignored: ${describeProblems(read.problems)}`);
        continue;
      }
      if (this.#nodes.has(read.node.name)) {
        options.log?.(`rented node ${name} (attached): ignored: the config file has a node of that name`);
        continue;
      }
      this.#nodes.set(read.node.name, fresh(read.node, "attached"));
    }
  }

  /** The first probe round; then one every probe interval until `stop()`. */
  async start(): Promise<void> {
    await this.probe();
    this.#schedule();
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
  }

  /** Probe every node now (joins a round under way). */
  probe(): Promise<void> {
    this.#round ??= Promise.all([...this.#nodes.values()].map((n) => probeNode(n, this.#o))).then(
      () => {
        this.#round = undefined;
      },
      () => {
        this.#round = undefined;
      },
    );
    return this.#round;
  }

  /** Probe one node now (a node being created: its progress through the provider's states). */
  async probeNode(name: string): Promise<RentedNodeView | undefined> {
    const n = this.#nodes.get(name);
    if (n === undefined) return undefined;
    await probeNode(n, this.#o);
    return this.#view(n);
  }

  names(): string[] {
    return [...this.#nodes.keys()];
  }

  list(): RentedNodeView[] {
    return [...this.#nodes.values()].map((n) => this.#view(n));
  }

  /** What peers may know, one entry per node. */
  peerViews(): RentedPeerView[] {
    return [...this.#nodes.values()].map((n) => peerViewOf(this.#facts(n), this.#redact));
  }

  /**
   * Rented nodes that may serve `model` for this caller, and, when none may but one has the model,
   * why not (for the error the caller gets instead of `model_not_found`).
   */
  serving(
    model: string,
    caller: { readonly fromPeer: boolean },
  ): {
    usable: RentedServingView[];
    refusal?: PairError;
  } {
    const facts = [...this.#nodes.values()].map((n) => this.#facts(n));
    return servingOf(facts, model, caller, this.#o.nodeName, this.#redact);
  }

  /** How to reach a node: its base URL and the headers carrying its credential. */
  link(name: string): RentedLink | undefined {
    const n = this.#nodes.get(name);
    const managed = this.#o.managed?.get(name);
    if (n !== undefined && managed !== undefined) return this.#managedLink(n, managed);
    if (n === undefined || n.baseUrl === undefined) return undefined;
    const coldStartMs = n.config.timeouts.coldStartMs;
    const headers: Record<string, string> = {};
    if (n.token !== undefined) headers["authorization"] = `Bearer ${n.token.reveal()}`;
    if (n.config.provider.startsWith("huggingface"))
      headers["x-scale-up-timeout"] = String(Math.ceil(coldStartMs / 1000));
    return { name, baseUrl: n.baseUrl, headers, coldStartMs, maxConcurrent: n.config.maxConcurrent };
  }

  /** A managed node's link: its URL comes from `prepare`, which wakes it when paused. */
  #managedLink(n: NodeState, managed: ManagedRentedNode): RentedLink {
    const name = n.config.name;
    const coldStartMs = n.config.timeouts.coldStartMs;
    const headers: Record<string, string> = {
      "x-scale-up-timeout": String(Math.ceil(coldStartMs / 1000)),
    };
    if (n.token !== undefined) headers["authorization"] = `Bearer ${n.token.reveal()}`;
    const own = managed.headers();
    return {
      name,
      // Replaced by what `prepare` reports before anything is sent.
      baseUrl: n.baseUrl ?? "https://endpoint-not-ready.invalid/v1",
      headers: own ?? headers,
      coldStartMs,
      maxConcurrent: n.config.maxConcurrent,
      prepare: async (signal) => {
        const ready = await managed.prepare(signal);
        return ready.ok ? { ok: true, baseUrl: `${ready.url.replace(/\/$/, "")}/v1` } : ready;
      },
    };
  }

  /**
   * What a request cost on this node, in micro-dollars (rounded up): per token from the counts the
   * response reported when the node is priced per token, else its hourly price (a managed endpoint's)
   * for the time the request held it; 0 when no price is known.
   */
  costMicroUsd(
    name: string,
    model: string,
    use: { tokensIn?: number; tokensOut?: number; durationMs: number },
  ): number {
    const n = this.#nodes.get(name);
    if (n === undefined) return 0;
    const perMillion = n.prices.get(model);
    const price = this.#o.managed?.get(name)?.priceMicroUsdPerHour();
    // Whole micro-dollars per hour, as the view shows it.
    const usdPerHour = price === undefined ? undefined : Math.round(price) / USD;
    return estimateCostMicroUsd(
      {
        ...(perMillion === undefined ? {} : { perMillion }),
        ...(usdPerHour === undefined ? {} : { usdPerHour }),
      },
      use,
    );
  }

  /** A request could not connect: unreachable until the next good probe. */
  markDown(name: string, why: string): void {
    const n = this.#nodes.get(name);
    if (n === undefined) return;
    n.state = "unreachable";
    n.lastError = why;
  }

  /** The provider refused the credential on a request. */
  credentialRejected(name: string, status: number): void {
    const n = this.#nodes.get(name);
    if (n === undefined) return;
    n.state = "credential_rejected";
    n.lastError = credentialRejectedReason(n.config, status);
    // Read it again next round: the user may have just set a new one.
    n.token = undefined;
  }

  /** `pair rented attach`: validate as a config entry, persist (never a secret), probe (unless told not to). */
  async attach(entry: Record<string, unknown>, options: { probe?: boolean } = {}): Promise<RentedChange> {
    const read = this.#o.readConfig(entry, this.#o.nodeName);
    if (!read.ok) {
      const insecure = read.problems.find(
        (p) => p.code === "insecure_url" || p.code === "literal_credential",
      );
      const unbudgeted = read.problems.some((p) => p.code === "budget_required");
      return {
        ok: false,
        code:
          insecure?.code === "insecure_url"
            ? "insecure_url"
            : unbudgeted && read.problems.length === 1
              ? "budget_required"
              : "invalid_value",
        message: describeProblems(read.problems),
        problems: read.problems,
      };
    }
    const name = read.node.name;
    if (this.#nodes.has(name))
      return {
        ok: false,
        code: "duplicate_name",
        message: `a rented node named ${name} exists already (pair nodes lists them)`,
      };
    this.#file = { ...this.#file, attached: [...this.#file.attached, entry] };
    writeRentedFile(this.#o.dataDir, this.#file);
    const state = fresh(read.node, "attached");
    this.#nodes.set(name, state);
    this.#o.log?.(`rented node ${name}: attached (${read.node.provider})`);
    if (options.probe !== false) await probeNode(state, this.#o);
    return { ok: true, node: this.#view(state) };
  }

  /** Pause, resume or delete a managed node (through the hosting contract); then probe it again. */
  async act(name: string, action: ManagedActionName): Promise<RentedAction> {
    const n = this.#nodes.get(name);
    if (n === undefined)
      return {
        ok: false,
        error: {
          code: "unknown_rented_node",
          message: `no rented node named ${name} (pair nodes lists them)`,
        },
      };
    const managed = this.#o.managed?.get(name);
    if (managed === undefined)
      return {
        ok: false,
        error: {
          code: "rented_node_ineligible",
          message: `rented node ${name} is not managed by PAIR (lifecycle.managed: true on a Hugging Face endpoint)`,
          node: name,
        },
      };
    const done = await ManagedNodes.act(managed, action);
    if (!done.ok) return done;
    await probeNode(n, this.#o);
    return { ok: true, node: this.#view(n) };
  }

  /** `pair rented share NAME on|off` and `pair rented policy NAME USE`: persisted overrides. */
  override(name: string, change: RentedOverride): RentedChange {
    const n = this.#nodes.get(name);
    if (n === undefined) return unknownNode(name);
    const overrides = { ...this.#file.overrides, [name]: { ...this.#file.overrides[name], ...change } };
    this.#file = { ...this.#file, overrides };
    writeRentedFile(this.#o.dataDir, this.#file);
    const v = this.#view(n);
    this.#o.log?.(`rented node ${name}: shared ${v.shared ? "on" : "off"}, policy ${v.policy}`);
    return { ok: true, node: v };
  }

  /**
   * `pair rented reset NAME`: forget the run-time share switch and routing policy set for a node, so
   * its config entry (or, for a node attached at run time, what it was attached with) applies again.
   * The node itself stays: a reset never detaches a node or touches a managed one's endpoint.
   */
  reset(name: string): RentedChange {
    const n = this.#nodes.get(name);
    if (n === undefined) return unknownNode(name);
    if (this.#file.overrides[name] === undefined) return { ok: true, node: this.#view(n) };
    const overrides = Object.fromEntries(Object.entries(this.#file.overrides).filter(([k]) => k !== name));
    this.#file = { ...this.#file, overrides };
    writeRentedFile(this.#o.dataDir, this.#file);
    const v = this.#view(n);
    this.#o.log?.(
      `rented node ${name}: run-time changes reset — shared ${v.shared ? "on" : "off"}, policy ${v.policy}`,
    );
    return { ok: true, node: v };
  }

  /** What routing and the views decide by: computed on each call, nothing written back into `n`. */
  #facts(n: NodeState): NodeFacts {
    const name = n.config.name;
    const override = this.#file.overrides[name] ?? {};
    return nodeFacts(n, override, this.#o.managed?.get(name), this.#o.managed?.status(name));
  }

  #view(n: NodeState): RentedNodeView {
    return nodeView(this.#facts(n), this.#redact);
  }

  readonly #redact = (text: string): string => this.#o.redact?.(text) ?? text;

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = this.#o.timers.after(() => {
      void this.probe().finally(() => this.#schedule());
    }, this.#o.probeIntervalMs ?? 30_000);
  }
}

function unknownNode(name: string): RentedChange {
  return {
    ok: false,
    code: "unknown_rented_node",
    message: `no rented node named ${name} (pair nodes lists them)`,
  };
}

function describeProblems(problems: readonly RentedNodeProblem[]): string {
  return problems.map((p) => `${p.path === "" ? "" : `${p.path}: `}${p.code}: ${p.message}`).join("; ");
}
