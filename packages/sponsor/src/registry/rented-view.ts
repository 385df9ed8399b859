/**
 * What the sponsor decides and shows of one rented node, computed from its state and never written
 * back into it: the typed facts routing decides by (share, policy, budget, eligibility, with a
 * manager's status laid over the probe's), the rented nodes that may serve a model for a caller and
 * why the others may not, the admin view (`pair rented list`) and the peer view.
 * Must not know: probing, the overrides file, how a request is sent, the credential store.
 */

import { formatCredentialRef, type RoutingUse } from "../config/index.js";
import { configuredWindow } from "../config/index.js";
import type { PairError } from "@pair/dialects";
import { outputPricePerMillion } from "../core/cost-estimate.js";
import type { CreatedInfo, ManagedView } from "../core/managed-endpoint-view.js";
import type { ManagedRentedNode } from "../core/managed-node.js";
import { BUDGET_REASON_PREFIX, peerReasonText, rentedProblemOf } from "./peer-reason.js";
import { OFF_LAN_LABEL, type RentedPeerView } from "./peer-view.js";
import type { RentedOverride } from "./rented-file.js";
import type { ManagedStatus, NodeState, RentedState } from "./rented-probe.js";

/** States in which a node takes requests (a cold start is waited for within `cold_start_s`). */
const ELIGIBLE_STATES: readonly RentedState[] = ["running", "warming", "starting", "scaled_to_zero"];

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

/** A node's state as routing and the views see it: the probe's, with its manager's status laid over. */
export type SeenState = Pick<
  NodeState,
  "state" | "models" | "gpu" | "lastError" | "providerState" | "providerMessage"
>;

/** What routing decides by for one node, typed. */
export interface NodeFacts {
  readonly node: NodeState;
  readonly seen: SeenState;
  readonly shared: boolean;
  readonly policy: RoutingUse;
  readonly overBudget: PairError | undefined;
  /** Why it takes no request now; null when it is eligible. */
  readonly reason: string | null;
  readonly overridden: boolean;
  readonly managed: ManagedRentedNode | undefined;
}

/** A usable rented node for one model, as routing reads it. */
export interface RentedServingView {
  name: string;
  policy: RoutingUse;
  warm: boolean;
  price: number | null;
  contextTokens?: number;
}

/** Scrubs secrets from the detail a view shows (reason, last error, provider message). */
export type Redact = (text: string) => string;

/**
 * The facts of node `n`: its run-time `override`, its managed node (if any) and what its manager
 * knows of it now (`live`) laid over the probe's state. Pure: nothing is written into `n`.
 */
export function nodeFacts(
  n: NodeState,
  override: RentedOverride,
  managed: ManagedRentedNode | undefined,
  live: ManagedStatus | undefined,
): NodeFacts {
  const own = override.routing_use === undefined ? managed?.routingUse() : undefined;
  const policy = override.routing_use ?? own?.use ?? n.config.routing.use;
  const overBudget = managed?.budgetRefusal();
  const seen: SeenState = live === undefined ? n : { ...n, ...live, models: [...live.models] };
  const reason =
    policy === "never"
      ? (own?.why ?? "routing policy is never")
      : overBudget !== undefined
        ? `${BUDGET_REASON_PREFIX}${overBudget.message}`
        : ELIGIBLE_STATES.includes(seen.state) || (seen.state === "paused" && managed?.wakeable() === true)
          ? null
          : seen.state === "unknown"
            ? "not probed yet"
            : `${seen.state.replace(/_/g, " ")}${seen.lastError === undefined ? "" : `: ${seen.lastError}`}`;
  return {
    node: n,
    seen,
    shared: override.share_with_cluster ?? n.config.shareWithCluster,
    policy,
    overBudget,
    reason,
    overridden: Object.keys(override).length > 0,
    managed,
  };
}

/** The admin view of a node, from its facts. */
export function nodeView(f: NodeFacts, redact: Redact): RentedNodeView {
  const { node: n, seen, managed } = f;
  return {
    name: n.config.name,
    kind: "rented",
    label: OFF_LAN_LABEL,
    provider: n.config.provider,
    credential: n.config.credential === undefined ? null : formatCredentialRef(n.config.credential),
    gpu: seen.gpu ?? null,
    state: seen.state,
    models: seen.models,
    allowlist: n.config.models,
    shared: f.shared,
    policy: f.policy,
    eligible: f.reason === null,
    reason: f.reason === null ? null : redact(f.reason),
    warnings: n.warnings.map(redact),
    last_error: seen.lastError === undefined ? null : redact(seen.lastError),
    source: n.source,
    overridden: f.overridden,
    managed: managed?.view() ?? null,
    provider_state: seen.providerState ?? null,
    provider_message: seen.providerMessage === undefined ? null : redact(seen.providerMessage),
    created: managed?.created() ?? null,
    budget: {
      usd_per_day: usdOf(n.config.budget.budgetMicroUsdPerDay),
      usd_per_month: usdOf(n.config.budget.budgetMicroUsdPerMonth),
    },
  };
}

/** What peers may know of a node: never a URL, a credential or the probe's error. */
export function peerViewOf(f: NodeFacts, redact: Redact): RentedPeerView {
  const v = nodeView(f, redact);
  return {
    name: v.name,
    kind: "rented",
    label: OFF_LAN_LABEL,
    provider: v.provider,
    gpu: v.gpu,
    state: v.state,
    usd_per_hour: v.managed?.usd_per_hour ?? null,
    usd_per_mtok: outputPricePerMillion(f.seen.models, f.node.prices),
    spend_usd: peerSpend(v.managed),
    models: v.models,
    shared: v.shared,
    policy: v.policy,
    eligible: v.eligible,
    reason: peerReason(f, redact),
    // context: the windows it holds, so peers skip it for prompts it cannot take
    context_windows: windowsOf(f.node, f.seen.models),
  };
}

/**
 * A peer's reason: a policy's or budget's own text (the sponsor's words, no detail), else the
 * problem's code and fixed text (peer-reason.ts) — never the probe's error, which names the endpoint.
 */
export function peerReason(f: NodeFacts, redact: Redact): string | null {
  if (f.reason === null) return null;
  if (f.policy === "never" || f.overBudget !== undefined) return redact(f.reason);
  return peerReasonText(rentedProblemOf(f.seen.state, f.seen.lastError));
}

/**
 * The nodes of `facts` that may serve `model` for this caller, and, when none may but one has the
 * model, why not (for the error the caller gets instead of `model_not_found`). `sponsor`: this node's
 * name, for the fix a refusal names.
 */
export function servingOf(
  facts: Iterable<NodeFacts>,
  model: string,
  caller: { readonly fromPeer: boolean },
  sponsor: string,
  redact: Redact,
): { usable: RentedServingView[]; refusal?: PairError } {
  const usable: RentedServingView[] = [];
  let refusal: PairError | undefined;
  for (const f of facts) {
    const { seen, policy } = f;
    if (!seen.models.includes(model)) continue;
    const name = f.node.config.name;
    if (caller.fromPeer && !f.shared) {
      refusal ??= {
        code: "rented_node_not_shared",
        message:
          `rented node ${name} serves "${model}" but its sponsor ${sponsor} does not share it ` +
          `with the cluster (on ${sponsor}: pair rented share ${name} on)`,
        node: name,
      };
      continue;
    }
    if (f.overBudget !== undefined && policy !== "never") {
      refusal ??= f.overBudget;
      continue;
    }
    if (f.reason !== null) {
      const why = caller.fromPeer ? peerReason(f, redact) : redact(f.reason);
      refusal ??= {
        code:
          seen.state === "credential_rejected" || seen.state === "public_endpoint_refused"
            ? seen.state
            : seen.state === "paused" && policy !== "never"
              ? "rented_node_paused"
              : "rented_node_ineligible",
        message: `rented node ${name} cannot take requests now: ${why ?? seen.state}`,
        node: name,
      };
      continue;
    }
    usable.push({
      name,
      policy,
      warm: seen.state === "running",
      price: outputPricePerMillion(seen.models, f.node.prices),
      // context: the configured window wins over the listed one
      ...windowField(f.node, model),
    });
  }
  return refusal === undefined ? { usable } : { usable, refusal };
}

function usdOf(microUsd: number | undefined): number | null {
  return microUsd === undefined ? null : microUsd / 1_000_000;
}

/** What peers learn of a managed node's spend: numbers only (session, today, this month). */
function peerSpend(managed: ManagedView | null): RentedPeerView["spend_usd"] {
  const s = managed?.spend_usd;
  return s === undefined || s === null ? null : { session: s.session, day: s.today, month: s.month };
}

/** context: a node's window for one model: `context_tokens`, else what its /models listed. */
function windowField(n: NodeState, model: string): { contextTokens?: number } {
  const tokens = configuredWindow(n.config.contextTokens, model) ?? n.windows.get(model);
  return tokens === undefined ? {} : { contextTokens: tokens };
}

/** context: the windows of every model a node serves, where known. */
function windowsOf(n: NodeState, models: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const model of models) {
    const tokens = windowField(n, model).contextTokens;
    if (tokens !== undefined) out[model] = tokens;
  }
  return out;
}
