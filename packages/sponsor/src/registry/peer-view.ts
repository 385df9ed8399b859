/**
 * What a sponsor tells its peers about each rented node it holds — and nothing else: name, kind,
 * the off-LAN label, provider, GPU, state, price, spend so far (numbers only), models, whether it is shared, its routing policy,
 * and whether it is eligible (with the reason when not). Never its URL, never a credential: the
 * fields are listed here once, the writer builds exactly them, the reader keeps exactly them, and a
 * test checks the list.
 * Must not know: how the sponsor reaches the node, credentials, HTTP.
 */

import { ROUTING_USES, type RoutingUse } from "../config/index.js";

export const OFF_LAN_LABEL = "Rented · off-LAN";

export interface RentedPeerView {
  readonly name: string;
  readonly kind: "rented";
  readonly label: typeof OFF_LAN_LABEL;
  readonly provider: string;
  readonly gpu: string | null;
  readonly state: string;
  readonly usd_per_hour: number | null;
  readonly usd_per_mtok: number | null;
  /** A managed node's running cost, as its sponsor's ledger counts it (null: not managed or unknown). */
  readonly spend_usd: { readonly session: number; readonly day: number; readonly month: number } | null;
  readonly models: readonly string[];
  readonly shared: boolean;
  readonly policy: RoutingUse;
  readonly eligible: boolean;
  readonly reason: string | null;
  /** By model, its context window where known (context: docs/context.md); absent from older sponsors. */
  readonly context_windows?: Readonly<Record<string, number>>;
}

/** Every field a peer may learn about a rented node, in order. */
export const RENTED_PEER_VIEW_FIELDS = [
  "name",
  "kind",
  "label",
  "provider",
  "gpu",
  "state",
  "usd_per_hour",
  "usd_per_mtok",
  "spend_usd",
  "models",
  "shared",
  "policy",
  "eligible",
  "reason",
  "context_windows",
] as const satisfies readonly (keyof RentedPeerView)[];

const MAX_TEXT = 512;
const MAX_MODELS = 1_024;

/** A peer's list of rented views, field by field; anything malformed throws (the answer counts as none). */
export function readRentedPeerViews(json: unknown): RentedPeerView[] {
  if (json === undefined) return [];
  if (!Array.isArray(json) || json.length > 64) throw new Error("not an inventory: rented");
  return json.map((item: unknown) => {
    const o = (typeof item === "object" && item !== null ? item : {}) as Record<string, unknown>;
    const text = (key: string, nullable = false): string | null => {
      const v = o[key];
      if (nullable && v === null) return null;
      if (typeof v !== "string" || v.length > MAX_TEXT) throw new Error(`not an inventory: rented[].${key}`);
      return v;
    };
    const price = (key: string): number | null => {
      const v = o[key];
      if (v === null || v === undefined) return null;
      if (typeof v !== "number" || !(v >= 0) || !Number.isFinite(v))
        throw new Error(`not an inventory: rented[].${key}`);
      return v;
    };
    const spend = o["spend_usd"];
    let spendUsd: RentedPeerView["spend_usd"] = null;
    if (spend !== null && spend !== undefined) {
      if (typeof spend !== "object" || Array.isArray(spend))
        throw new Error("not an inventory: rented[].spend_usd");
      const s = spend as Record<string, unknown>;
      const amount = (key: string): number => {
        const v = s[key];
        if (typeof v !== "number" || !(v >= 0) || !Number.isFinite(v))
          throw new Error(`not an inventory: rented[].spend_usd.${key}`);
        return v;
      };
      spendUsd = { session: amount("session"), day: amount("day"), month: amount("month") };
    }
    const models = o["models"];
    if (!Array.isArray(models) || models.length > MAX_MODELS || models.some((m) => typeof m !== "string"))
      throw new Error("not an inventory: rented[].models");
    const policy = o["policy"];
    if (typeof policy !== "string" || !(ROUTING_USES as readonly string[]).includes(policy))
      throw new Error("not an inventory: rented[].policy");
    if (typeof o["shared"] !== "boolean" || typeof o["eligible"] !== "boolean")
      throw new Error("not an inventory: rented[].shared, eligible");
    return {
      name: text("name") ?? "",
      kind: "rented",
      label: OFF_LAN_LABEL,
      provider: text("provider") ?? "",
      gpu: text("gpu", true),
      state: text("state") ?? "",
      usd_per_hour: price("usd_per_hour"),
      usd_per_mtok: price("usd_per_mtok"),
      spend_usd: spendUsd,
      models: models as string[],
      shared: o["shared"],
      policy: policy as RoutingUse,
      eligible: o["eligible"],
      reason: text("reason", true),
      ...contextWindowsOf(o["context_windows"], models as string[]),
    };
  });
}

/** A sponsor's published windows, only for models it serves and as plausible numbers. */
function contextWindowsOf(
  value: unknown,
  models: readonly string[],
): { context_windows?: Readonly<Record<string, number>> } {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value))
    throw new Error("not an inventory: rented[].context_windows");
  const out: Record<string, number> = {};
  for (const [model, tokens] of Object.entries(value as Record<string, unknown>))
    if (models.includes(model) && typeof tokens === "number" && Number.isSafeInteger(tokens) && tokens > 0)
      out[model] = tokens;
  return { context_windows: out };
}
