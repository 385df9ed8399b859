/**
 * The rented nodes this node sponsors: from the config file and `pair rented attach`, with the run-time
 * share/policy switches applied. The sponsor alone holds each node's credential (read from the OS
 * credential store, kept in memory as a redacted value) and probes each node's `/v1/models` over
 * verified HTTPS: state, models, and a warning when it answers without a credential. What it tells
 * peers is the peer view (peer-view.ts): never a URL, never a credential. For routing it says which
 * rented nodes serve a model for a caller (a peer's request only reaches shared nodes), why one may
 * not (`rented_node_not_shared`, `rented_node_ineligible`), and how to reach one (URL + token headers,
 * the sponsor's outbound request only). Probing one node is rented-probe.ts.
 * Must not know: the client API, dialects, how the forwarder relays, the credential store's platform.
 */

import type { ProxyUrlOf } from "@pair/runpod";
import type { Dispatcher } from "undici";
import {
  formatCredentialRef,
  readRentedNodeValue,
  type RentedNodeConfig,
  type RentedNodeProblem,
  type RoutingUse,
} from "../config/index.js";
import { configuredWindow } from "../context/index.js";
import type { PairError } from "@pair/dialects";
import type { CreatedInfo, ManagedView } from "./managed-endpoint.js";
import { estimateCostMicroUsd, outputPricePerMillion } from "./cost-estimate.js";
import type { EndpointLookupFn } from "./hf-endpoint-states.js";
import { OFF_LAN_LABEL, type RentedPeerView } from "./peer-view.js";
import { BUDGET_REASON_PREFIX, peerReasonText, rentedProblemOf } from "./peer-reason.js";
import { readSavedEntry } from "./attached-configs.js";
import { readRentedFile, writeRentedFile, type RentedFile, type RentedOverride } from "./rented-file.js";
import {
  credentialRejectedReason,
  fresh,
  probeNode,
  type CredentialReader,
  type ManagedStatus,
  type NodeState,
  type RentedState,
} from "./rented-probe.js";

export type { CredentialReader, ManagedStatus, RentedState } from "./rented-probe.js";

/** States in which a node takes requests (a cold start is waited for within `cold_start_s`). */
const ELIGIBLE_STATES: readonly RentedState[] = ["running", "warming", "starting", "scaled_to_zero"];

/** What routing asks of the managed nodes (managed/ implements it). */
export interface ManagedHooks {
  has(name: string): boolean;
  /** Paused, yet a request may wake it. */
  wakeable(name: string): boolean;
  /** It reached a budget cap (`budget_exceeded`). */
  budgetRefusal(name: string): PairError | undefined;
  /** `pair rented pause|resume|delete NAME`. */
  act(
    name: string,
    action: "pause" | "resume" | "delete",
  ): Promise<{ readonly ok: true } | { readonly ok: false; readonly error: PairError }>;
  /** Wake it if needed; its data-plane base URL (without /v1), or why not. */
  prepare(
    name: string,
    signal: AbortSignal,
  ): Promise<{ ok: true; url: string } | { ok: false; error: PairError }>;
  view(name: string): ManagedView | undefined;
  /** Nodes the manager knows without a probe (a Runpod pod made on demand): state, models, GPU. */
  status?(name: string): ManagedStatus | undefined;
  /** Headers a request to the node carries, instead of its `credential` (a Runpod pod's vLLM key). */
  headers?(name: string): Readonly<Record<string, string>> | undefined;
  /** Set for nodes PAIR created (`pair rented create`). */
  created?(name: string): CreatedInfo | null;
  /**
   * The routing use the manager puts in force (a job node: `never` outside its window), with why;
   * undefined: the configured use holds. A `pair rented policy` override still wins.
   */
  routingUse?(name: string): { readonly use: RoutingUse; readonly why?: string } | undefined;
}

/** A rented node as the sponsor's admin API shows it: no URL, no credential value. */
export interface RentedNodeView {
  readonly name: string;
  readonly kind: "rented";
  readonly label: typeof OFF_LAN_LABEL;
  readonly provider: string;
  readonly credential: string | null;
  /** What it runs on as the provider reports it ("L4 ×1", "NVIDIA L40S ×2"); null until known. */
  readonly gpu: string | null;
  readonly state: RentedState;
  readonly models: readonly string[];
  readonly allowlist: readonly string[];
  readonly shared: boolean;
  readonly policy: RoutingUse;
  readonly eligible: boolean;
  readonly reason: string | null;
  readonly warnings: readonly string[];
  readonly last_error: string | null;
  readonly source: "config" | "attached";
  readonly overridden: boolean;
  /** Managed endpoints only: who paused it, running cost (`spend_usd`), price, open obligations. */
  readonly managed: ManagedView | null;
  /** The provider's own state word (pending, initializing, running, failed, paused…) and message. */
  readonly provider_state: string | null;
  readonly provider_message: string | null;
  /** Set for nodes PAIR created. */
  readonly created: CreatedInfo | null;
  /** The caps in USD (null: no cap), counted in the sponsor's time zone. */
  readonly budget: { readonly usd_per_day: number | null; readonly usd_per_month: number | null };
}

/** What the forwarder needs to send one request to a rented node. */
export interface RentedLink {
  readonly name: string;
  readonly baseUrl: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly coldStartMs: number;
  /** Managed nodes: wake if paused and tell the base URL, before the request is sent. */
  readonly prepare?: (
    signal: AbortSignal,
  ) => Promise<{ ok: true; baseUrl: string } | { ok: false; error: PairError }>;
}

export interface RentedNodesOptions {
  readonly nodeName: string;
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
  /** Managed Hugging Face endpoints (wake, budget); absent: none is managed. */
  readonly managed?: ManagedHooks;
  /** Runpod pods attached by id: their proxy base URL (`providers.runpod.proxy_url`; default Runpod's). */
  readonly runpodProxyUrl?: ProxyUrlOf;
  readonly log?: (line: string) => void;
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
  #timer: NodeJS.Timeout | undefined;
  #round: Promise<void> | undefined;
  #stopped = false;

  constructor(options: RentedNodesOptions) {
    this.#o = options;
    this.#file = readRentedFile(options.dataDir);
    for (const config of options.configured) this.#nodes.set(config.name, fresh(config, "config"));
    for (const entry of this.#file.attached) {
      const read = readSavedEntry(entry, options.nodeName);
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
    if (this.#timer !== undefined) clearTimeout(this.#timer);
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
    return [...this.#nodes.values()].map((n) => {
      const v = this.#view(n);
      return {
        name: v.name,
        kind: "rented",
        label: OFF_LAN_LABEL,
        provider: v.provider,
        gpu: v.gpu,
        state: v.state,
        usd_per_hour: v.managed?.usd_per_hour ?? null,
        usd_per_mtok: outputPricePerMillion(n.models, n.prices),
        spend_usd: peerSpend(v.managed),
        models: v.models,
        shared: v.shared,
        policy: v.policy,
        eligible: v.eligible,
        reason: this.#peerReason(n, v),
        // context: the windows it holds, so peers skip it for prompts it cannot take
        context_windows: windowsOf(n),
      };
    });
  }

  /**
   * A peer's reason: a policy's or budget's own text (the sponsor's words, no detail), else the
   * problem's code and fixed text (peer-reason.ts) — never the probe's error, which names the endpoint.
   */
  #peerReason(n: NodeState, v: RentedNodeView): string | null {
    if (v.reason === null) return null;
    if (v.policy === "never" || this.#o.managed?.budgetRefusal(v.name) !== undefined) return v.reason;
    return peerReasonText(rentedProblemOf(n.state, n.lastError));
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
    const usable: RentedServingView[] = [];
    let refusal: PairError | undefined;
    for (const n of this.#nodes.values()) {
      if (!n.models.includes(model)) continue;
      const v = this.#view(n);
      if (caller.fromPeer && !v.shared) {
        refusal ??= {
          code: "rented_node_not_shared",
          message:
            `rented node ${v.name} serves "${model}" but its sponsor ${this.#o.nodeName} does not share it ` +
            `with the cluster (on ${this.#o.nodeName}: pair rented share ${v.name} on)`,
          node: v.name,
        };
        continue;
      }
      const overBudget = this.#o.managed?.budgetRefusal(v.name);
      if (overBudget !== undefined && v.policy !== "never") {
        refusal ??= overBudget;
        continue;
      }
      if (!v.eligible) {
        refusal ??= {
          code:
            v.state === "credential_rejected" || v.state === "public_endpoint_refused"
              ? v.state
              : v.state === "paused" && v.policy !== "never"
                ? "rented_node_paused"
                : "rented_node_ineligible",
          message: `rented node ${v.name} cannot take requests now: ${(caller.fromPeer ? this.#peerReason(n, v) : v.reason) ?? v.state}`,
          node: v.name,
        };
        continue;
      }
      usable.push({
        name: v.name,
        policy: v.policy,
        warm: v.state === "running",
        price: outputPricePerMillion(n.models, n.prices),
        // context: the configured window wins over the listed one
        ...windowField(n, model),
      });
    }
    return refusal === undefined ? { usable } : { usable, refusal };
  }

  /** How to reach a node: its base URL and the headers carrying its credential. */
  link(name: string): RentedLink | undefined {
    const n = this.#nodes.get(name);
    const managed = this.#o.managed;
    if (n !== undefined && managed?.has(name) === true) return this.#managedLink(n, managed);
    if (n === undefined || n.baseUrl === undefined) return undefined;
    const coldStartMs = n.config.timeouts.coldStartMs;
    const headers: Record<string, string> = {};
    if (n.token !== undefined) headers["authorization"] = `Bearer ${n.token.reveal()}`;
    if (n.config.provider.startsWith("huggingface"))
      headers["x-scale-up-timeout"] = String(Math.ceil(coldStartMs / 1000));
    return { name, baseUrl: n.baseUrl, headers, coldStartMs };
  }

  /** A managed node's link: its URL comes from `prepare`, which wakes it when paused. */
  #managedLink(n: NodeState, managed: ManagedHooks): RentedLink {
    const name = n.config.name;
    const coldStartMs = n.config.timeouts.coldStartMs;
    const headers: Record<string, string> = {
      "x-scale-up-timeout": String(Math.ceil(coldStartMs / 1000)),
    };
    if (n.token !== undefined) headers["authorization"] = `Bearer ${n.token.reveal()}`;
    const own = managed.headers?.(name);
    return {
      name,
      // Replaced by what `prepare` reports before anything is sent.
      baseUrl: n.baseUrl ?? "https://endpoint-not-ready.invalid/v1",
      headers: own ?? headers,
      coldStartMs,
      prepare: async (signal) => {
        const ready = await managed.prepare(name, signal);
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
    const usdPerHour = this.#o.managed?.view(name)?.usd_per_hour ?? undefined;
    return estimateCostMicroUsd(
      {
        ...(perMillion === undefined ? {} : { perMillion }),
        ...(usdPerHour === null || usdPerHour === undefined ? {} : { usdPerHour }),
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
    const read = readRentedNodeValue(entry, this.#o.nodeName);
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
  async act(name: string, action: "pause" | "resume" | "delete"): Promise<RentedAction> {
    const n = this.#nodes.get(name);
    if (n === undefined)
      return {
        ok: false,
        error: {
          code: "unknown_rented_node",
          message: `no rented node named ${name} (pair nodes lists them)`,
        },
      };
    const managed = this.#o.managed;
    if (managed === undefined || !managed.has(name))
      return {
        ok: false,
        error: {
          code: "rented_node_ineligible",
          message: `rented node ${name} is not managed by PAIR (lifecycle.managed: true on a Hugging Face endpoint)`,
          node: name,
        },
      };
    const done = await managed.act(name, action);
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

  #view(n: NodeState): RentedNodeView {
    const o = this.#file.overrides[n.config.name] ?? {};
    const shared = o.share_with_cluster ?? n.config.shareWithCluster;
    const managed = this.#o.managed;
    const own = o.routing_use === undefined ? managed?.routingUse?.(n.config.name) : undefined;
    const policy = o.routing_use ?? own?.use ?? n.config.routing.use;
    const overBudget = managed?.budgetRefusal(n.config.name);
    const live = managed?.status?.(n.config.name);
    if (live !== undefined) Object.assign(n, live, { models: [...live.models] });
    const reason =
      policy === "never"
        ? (own?.why ?? "routing policy is never")
        : overBudget !== undefined
          ? `${BUDGET_REASON_PREFIX}${overBudget.message}`
          : ELIGIBLE_STATES.includes(n.state) ||
              (n.state === "paused" && managed?.wakeable(n.config.name) === true)
            ? null
            : n.state === "unknown"
              ? "not probed yet"
              : `${n.state.replace(/_/g, " ")}${n.lastError === undefined ? "" : `: ${n.lastError}`}`;
    const redact = this.#o.redact ?? ((text: string) => text);
    return {
      name: n.config.name,
      kind: "rented",
      label: OFF_LAN_LABEL,
      provider: n.config.provider,
      credential: n.config.credential === undefined ? null : formatCredentialRef(n.config.credential),
      gpu: n.gpu ?? null,
      state: n.state,
      models: n.models,
      allowlist: n.config.models,
      shared,
      policy,
      eligible: reason === null,
      reason: reason === null ? null : redact(reason),
      warnings: n.warnings.map(redact),
      last_error: n.lastError === undefined ? null : redact(n.lastError),
      source: n.source,
      overridden: Object.keys(o).length > 0,
      managed: managed?.view(n.config.name) ?? null,
      provider_state: n.providerState ?? null,
      provider_message: n.providerMessage === undefined ? null : redact(n.providerMessage),
      created: managed?.created?.(n.config.name) ?? null,
      budget: {
        usd_per_day: usdOf(n.config.budget.budgetMicroUsdPerDay),
        usd_per_month: usdOf(n.config.budget.budgetMicroUsdPerMonth),
      },
    };
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      void this.probe().finally(() => this.#schedule());
    }, this.#o.probeIntervalMs ?? 30_000);
    this.#timer.unref();
  }
}

function unknownNode(name: string): RentedChange {
  return {
    ok: false,
    code: "unknown_rented_node",
    message: `no rented node named ${name} (pair nodes lists them)`,
  };
}

function usdOf(microUsd: number | undefined): number | null {
  return microUsd === undefined ? null : microUsd / 1_000_000;
}

/** What peers learn of a managed node's spend: numbers only (session, today, this month). */
function peerSpend(managed: ManagedView | null): RentedPeerView["spend_usd"] {
  const s = managed?.spend_usd;
  return s === undefined || s === null ? null : { session: s.session, day: s.today, month: s.month };
}

function describeProblems(problems: readonly RentedNodeProblem[]): string {
  return problems.map((p) => `${p.path === "" ? "" : `${p.path}: `}${p.code}: ${p.message}`).join("; ");
}

/** A usable rented node for one model, as routing reads it. */
interface RentedServingView {
  name: string;
  policy: RoutingUse;
  warm: boolean;
  price: number | null;
  contextTokens?: number;
}

/** context: a node's window for one model: `context_tokens`, else what its /models listed. */
function windowField(n: NodeState, model: string): { contextTokens?: number } {
  const tokens = configuredWindow(n.config.contextTokens, model) ?? n.windows.get(model);
  return tokens === undefined ? {} : { contextTokens: tokens };
}

/** context: the windows of every model a node serves, where known. */
function windowsOf(n: NodeState): Record<string, number> {
  const out: Record<string, number> = {};
  for (const model of n.models) {
    const tokens = windowField(n, model).contextTokens;
    if (tokens !== undefined) out[model] = tokens;
  }
  return out;
}
