/**
 * What a managed Hugging Face endpoint decides and does beyond its create: the budget refusal (the
 * one answer the view and the router both read), the adoption of an endpoint that bills with no
 * record, the pause of a spell that never served its model, and the delete of the exact incarnation
 * PAIR declared. Free functions over the node's context, as the create steps are (endpoint-create.ts).
 * Must not know: the node's wake loop, its idle pass, the sponsor's exit, timers.
 */

import {
  endpointKey,
  resumeAllowed,
  type HfEndpoint,
  type HuggingFaceEndpointsProvider,
} from "@pair/huggingface";
import { routeEligibility } from "@pair/ledger";
import { sameIncarnation, type DeploymentRecord } from "@pair/provision";
import type { PairError } from "@pair/dialects";
import { adoptEndpoint, lastIncarnation, type CreateContext } from "./endpoint-create.js";
import type { ManagedLedger } from "../core/managed-ledger.js";
import type { ManagedAction } from "../core/managed-endpoint-view.js";
import type { ServeGate } from "./serve-gate.js";

/** What the actions read of the node: the create steps' context, and the node's provider, ledger and gate. */
export interface EndpointContext extends CreateContext {
  readonly name: string;
  readonly provider: HuggingFaceEndpointsProvider;
  readonly ledger: ManagedLedger;
  readonly gate: ServeGate;
}

/**
 * Refused for money: the node reached a cap (`budget_exceeded`), until the window resets; or it is
 * paused and its wake would cost more than is left (the check a resume makes).
 */
export function budgetRefusal(ctx: EndpointContext): PairError | undefined {
  if (ctx.price.microUsdPerHour === undefined) return undefined;
  const at = ctx.clock.now().wallMs;
  const e = routeEligibility(ctx.ledger.state, { kind: "rented", nodeId: ctx.name }, at);
  if (e.eligible || e.reason === "no-reservation") {
    if (ctx.live() !== undefined) return undefined;
    const wake = resumeAllowed(ctx.ledger.state, ctx.name, at);
    return wake.ok || wake.error.code !== "budget_exceeded"
      ? undefined
      : ctx.core.error("budget_exceeded", `a wake would cost more than is left: ${wake.error.message}`);
  }
  return {
    code: "budget_exceeded",
    message:
      `rented node ${ctx.name} reached its ${e.window === "day" ? "daily" : "monthly"} budget and is ` +
      `paused until ${new Date(e.untilMs).toISOString()}: raise budget.usd_per_${e.window} or wait`,
    node: ctx.name,
  };
}

/** `pair rented delete`, after the pause: delete the endpoint, only when it is the incarnation PAIR declared. */
export async function deleteIncarnation(ctx: EndpointContext): Promise<ManagedAction> {
  const { namespace, name } = ctx.config.endpoint;
  let endpoint: HfEndpoint;
  try {
    endpoint = await ctx.transport.getEndpoint(namespace, name);
  } catch (cause) {
    return { ok: false, error: ctx.core.error("upstream_error", (cause as Error).message) };
  }
  const previous = lastIncarnation(ctx.core.controller.state);
  if (previous !== undefined && !sameIncarnation(previous, endpoint.incarnation))
    return {
      ok: false,
      error: ctx.core.error(
        "rented_node_ineligible",
        `${namespace}/${name} is another incarnation: not deleted`,
      ),
    };
  const outcome = await ctx.provider.delete(endpointKey(endpoint));
  if (outcome.kind !== "accepted")
    return {
      ok: false,
      error: ctx.core.error(
        "upstream_error",
        outcome.kind === "refused" ? `${outcome.code}: ${outcome.message}` : outcome.cause,
      ),
    };
  ctx.log(`rented node ${ctx.name}: endpoint ${namespace}/${name} deleted`);
  return { ok: true };
}

/**
 * A spell billing for `startup_deadline_min` without ever serving its model is paused through the
 * contract (the obligation closes on evidence), and a request does not wake it again: that would
 * bill another deadline for nothing. `pair rented resume` tries again.
 */
export async function stopIfNeverServed(ctx: EndpointContext, live: DeploymentRecord): Promise<boolean> {
  const deadlineMs = ctx.config.lifecycle.startupDeadlineMs;
  const unserved = await ctx.gate.unservedMs(live, ctx.clock.now().wallMs);
  if (unserved === undefined || unserved < deadlineMs) return false;
  const status = live.observed?.status;
  ctx.core.pausedBy = "unhealthy";
  ctx.core.lastError =
    `it billed ${Math.round(deadlineMs / 60_000)} min (lifecycle.startup_deadline_min) without serving ` +
    `its model on /v1/models (${ctx.gate.notServing ?? `still ${status ?? "starting"}`}): paused; its ` +
    "engine image may not serve the OpenAI API. Fix it on Hugging Face, then pair rented resume";
  ctx.log(`rented node ${ctx.name}: ${ctx.core.lastError}`);
  await ctx.core.controller.requireStop(live.id, "unhealthy");
  return true;
}

/** No record, yet the endpoint bills or may (running, starting, scaled to zero): own it. */
export async function adoptIfBilling(ctx: EndpointContext): Promise<void> {
  const { namespace, name } = ctx.config.endpoint;
  const endpoint = await ctx.transport.getEndpoint(namespace, name);
  if (endpoint.state === "paused") return;
  // PAIR refuses to manage a public endpoint (public_endpoint_refused): it declares nothing for it,
  // so nothing of it is left to pause, at exit or ever.
  if (endpoint.accessType === "public") {
    ctx.core.lastError = `${namespace}/${name} is public: PAIR manages only private or authenticated endpoints`;
    return;
  }
  const previous = lastIncarnation(ctx.core.controller.state);
  if (previous !== undefined && !sameIncarnation(previous, endpoint.incarnation)) {
    ctx.core.lastError = `${namespace}/${name} was recreated (created ${endpoint.incarnation}); PAIR leaves it alone`;
    return;
  }
  const result = await adoptEndpoint(ctx);
  if (!result.ok && result.error.code === "budget_exceeded") {
    // It bills, and the ledger will not authorize it: pause that exact endpoint directly.
    ctx.core.pausedBy = "budget-exceeded";
    await ctx.provider.stop(endpointKey(endpoint), "pause");
  }
}
