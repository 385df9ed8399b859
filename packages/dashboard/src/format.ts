/**
 * How numbers, prices, times and states read on the dashboard.
 * Must not know: the DOM, where the values come from.
 */

import type { BatchRental, ModelRow } from "./wire.js";

/** `1.2 s`, `3 min 05 s`, `2 h 03 min`. */
export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  const s = ms / 1_000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const whole = Math.floor(s);
  if (whole < 3_600) return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, "0")} s`;
  return `${Math.floor(whole / 3_600)} h ${String(Math.floor((whole % 3_600) / 60)).padStart(2, "0")} min`;
}

/** `$1.80/hr`, or an em dash when the price is not known. */
export function formatHourly(usd: number | null): string {
  return usd === null ? "—" : `$${usd.toFixed(2)}/hr`;
}

/** An estimated cost: `$0.0042`; zero reads `$0`. */
export function formatCost(usd: number): string {
  if (usd === 0) return "$0";
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

/** Local date and time without seconds' noise: `2026-11-30 14:03:07`. */
export function formatTime(iso: string | null): string {
  if (iso === null) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * A text with ISO instants in it (a budget's "paused until …"), each read like every other time on
 * the page: the same clock, the same form.
 */
export function withReadableTimes(text: string): string {
  return text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?Z/g, (iso) => formatTime(iso));
}

/** A state word as people read it: `scaled_to_zero` → `scaled to zero`. */
export function stateText(state: string): string {
  return state.replace(/_/g, " ");
}

/** The tone of a state's badge. */
export function stateTone(state: string): "good" | "busy" | "bad" | "idle" {
  switch (state) {
    case "up":
    case "running":
    case "completed":
      return "good";
    case "starting":
    case "warming":
    case "scaled_to_zero":
    case "unknown":
    case "validating":
    case "in_progress":
    case "finalizing":
    case "cancelling":
      return "busy";
    case "paused":
    case "cancelled":
    case "expired":
      return "idle";
    default:
      return "bad";
  }
}

/** Requests in flight over capacity: `1 / 4`. */
export function formatLoad(inFlight: number, capacity: number): string {
  return `${inFlight} / ${capacity}`;
}

const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  "huggingface-endpoint": "Hugging Face Inference Endpoint",
  "huggingface-job": "Hugging Face Job",
  "huggingface-providers": "Inference Providers",
  runpod: "Runpod pod",
  "openai-compatible": "OpenAI-compatible endpoint",
};

/** A provider id as people read it: `huggingface-endpoint` → `Hugging Face Inference Endpoint`. */
export function providerName(id: string): string {
  return PROVIDER_NAMES[id] ?? id;
}

/** Short words for the codes a reason may start with (the full text stays on the node's page). */
const REASON_WORDS: Readonly<Record<string, string>> = {
  public_endpoint_refused: "public endpoint",
  credential_rejected: "credential rejected",
  credential_unavailable: "no credential",
  "budget exceeded": "budget",
  budget_exceeded: "budget",
  tls_failed: "TLS failed",
  not_probed: "not probed",
  "not probed yet": "not probed",
  "routing policy is never": "policy: never",
  upstream_error: "upstream error",
};

/**
 * A badge's few words for why a node takes no requests: the reason's leading code or phrase
 * (`credential_rejected: the provider refused …` → `credential rejected`), never its detail.
 */
export function reasonBadgeText(reason: string): string {
  const head = (reason.split(":")[0] ?? reason).trim();
  const known = REASON_WORDS[head];
  if (known !== undefined) return known;
  const words = head.replace(/_/g, " ");
  return words.length <= 24 ? words : `${words.slice(0, 23)}…`;
}

/** A context window in tokens, short: 32768 → "32k", 4000 → "4,000". */
export function formatTokens(n: number): string {
  return n >= 1024 && n % 1024 === 0 ? `${n / 1024}k` : n.toLocaleString("en-US");
}

/** Node → model → context window, from `/pair/v1/models`. */
export type ContextWindows = ReadonlyMap<string, ReadonlyMap<string, number>>;

export function contextWindows(rows: readonly ModelRow[] | undefined): ContextWindows {
  const byNode = new Map<string, Map<string, number>>();
  for (const row of rows ?? [])
    for (const [node, tokens] of Object.entries(row.context_tokens ?? {})) {
      const models = byNode.get(node) ?? new Map<string, number>();
      models.set(row.model, tokens);
      byNode.set(node, models);
    }
  return byNode;
}

/** A node's models, each with its context window where the node published one. */
export function formatModels(models: readonly string[], node: string, windows: ContextWindows): string {
  if (models.length === 0) return "none";
  const known = windows.get(node);
  return models
    .map((m) => {
      const tokens = known?.get(m);
      return tokens === undefined ? m : `${m} (${formatTokens(tokens)} context)`;
    })
    .join(", ");
}

/** A batch's completed lines by serving node, most first: `tower 120 (60%) · gpu-job 80 (40%)`. */
export function formatShare(byNode: Readonly<Record<string, number>> | undefined): string {
  const rows = Object.entries(byNode ?? {}).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const total = rows.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) return "—";
  return rows.map(([node, n]) => `${node} ${n} (${Math.round((n / total) * 100)}%)`).join(" · ");
}

/**
 * A `--rent auto` batch's rental in a line: the rented node, its GPU and state, the spend against the
 * batch's budget: `gpu-job (L4) serving · $0.42 of $2.00`; before a node is rented, what it does.
 */
export function formatRental(rent: BatchRental | null | undefined): string {
  if (rent === null || rent === undefined) return "never rents";
  const spend = `${formatCost(rent.spent_usd)}${rent.budget_usd === null ? "" : ` of ${formatCost(rent.budget_usd)}`}`;
  if (rent.node === null) return `${stateText(rent.state)} · ${spend}`;
  const stopped = rent.stop_reason === null ? "" : ` (${rent.stop_reason})`;
  return `${rent.node}${rent.gpu === null ? "" : ` (${rent.gpu})`} ${stateText(rent.state)}${stopped} · ${spend}`;
}
