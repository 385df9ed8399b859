/**
 * What a managed endpoint tells and is asked, as data: the view the node detail shows (spend, price,
 * open obligations, idle timer — never a URL or a credential), what `pair rented create` asks for, and
 * the outcome of an action; with the budget described for a refusal.
 * Must not know: the provider, the controller, the ledger's rules.
 */

import type { NodeSpend } from "@pair/ledger";
import type { HuggingFaceEndpointNode } from "../config/index.js";
import type { PairError } from "@pair/dialects";

/** Micro-USD per USD. */
export const USD = 1_000_000;

/** What the node detail shows of a managed endpoint (no URL, no credential). */
export interface ManagedView {
  readonly managed: true;
  readonly paused_by: string | null;
  readonly budget_exceeded: boolean;
  readonly spend_usd: { session: number; today: number; month: number; total: number } | null;
  readonly usd_per_hour: number | null;
  readonly open_obligations: number;
  readonly last_error: string | null;
  /** When a PAIR workload last ran on it (the idle timer counts from here) and the idle pause, in min. */
  readonly last_active_at: string;
  readonly idle_pause_min: number;
  /** When its sponsor last resumed it (`pair rented resume`, the dashboard), or null. */
  readonly resumed_at: string | null;
}

/** When PAIR created a node's endpoint, and how long ago (for progress lines). */
export interface CreatedInfo {
  readonly started_at: string;
  readonly elapsed_s: number;
}

/** What `pair rented create` asks for: the model, the chosen hardware offer and its price. */
export interface NewEndpointSpec {
  readonly repository: string;
  readonly vendor: string;
  readonly region: string;
  readonly accelerator: string;
  readonly instanceType: string;
  readonly instanceSize: string;
  readonly accessType: "private" | "authenticated";
  readonly scaleToZeroTimeoutMin: number;
  readonly priceUsdPerHour: number;
  /** The vLLM engine image; undefined: the adapter's pinned default. */
  readonly imageUrl?: string;
  /** Through the endpoint catalog's deploy (its engine recipe); the offer is then the price to budget by. */
  readonly fromCatalog?: true;
}

export type ManagedAction = { readonly ok: true } | { readonly ok: false; readonly error: PairError };

/** The view from the endpoint's state: money in USD, times as ISO strings. */
export function managedView(s: {
  readonly spend: NodeSpend | undefined;
  readonly pausedBy: string | undefined;
  readonly budgetExceeded: boolean;
  readonly priceMicroUsdPerHour: number | undefined;
  readonly openObligations: number;
  readonly lastError: string | undefined;
  readonly lastActiveMs: number;
  readonly idlePauseMs: number;
  readonly resumedAtMs?: number | undefined;
}): ManagedView {
  const usd = (micro: number) => Math.round(micro) / USD;
  return {
    managed: true,
    paused_by: s.pausedBy ?? null,
    budget_exceeded: s.budgetExceeded,
    spend_usd:
      s.spend === undefined
        ? null
        : {
            session: usd(s.spend.sessionMicroUsd),
            today: usd(s.spend.todayMicroUsd),
            month: usd(s.spend.thisMonthMicroUsd),
            total: usd(s.spend.totalMicroUsd),
          },
    usd_per_hour: s.priceMicroUsdPerHour === undefined ? null : usd(s.priceMicroUsdPerHour),
    open_obligations: s.openObligations,
    last_error: s.lastError ?? null,
    last_active_at: new Date(s.lastActiveMs).toISOString(),
    idle_pause_min: s.idlePauseMs / 60_000,
    resumed_at: s.resumedAtMs === undefined ? null : new Date(s.resumedAtMs).toISOString(),
  };
}

/** The caps, for a refusal: "$5/day, $50/month" or "no cap". */
export function describeBudget(budget: HuggingFaceEndpointNode["budget"]): string {
  const caps = [
    ...(budget.budgetMicroUsdPerDay === undefined ? [] : [`$${budget.budgetMicroUsdPerDay / USD}/day`]),
    ...(budget.budgetMicroUsdPerMonth === undefined ? [] : [`$${budget.budgetMicroUsdPerMonth / USD}/month`]),
  ];
  return caps.length === 0 ? "no cap" : caps.join(", ");
}
