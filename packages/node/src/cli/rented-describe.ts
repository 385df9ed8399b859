/**
 * `pair rented describe NAME`: one rented node as its sponsor knows it, on one page — provider,
 * GPU, state (and the provider's own word), models, share and policy, budget against spend, idle timer,
 * open stop obligations, warnings, and the recent state history. `--json` prints the node's view with
 * its `history` (the same objects `pair rented list --json` and the history route give).
 * Must not know: how rented nodes are run; the routes' wire details (rented-call.ts).
 */

import { CliFailure } from "./cli-errors.js";
import type { CliIo } from "./cli-io.js";
import { rentedCall } from "./rented-call.js";

/** The fields of the admin view this page reads; the view has more (see `pair rented list --json`). */
interface DescribedNode {
  readonly name: string;
  readonly provider: string;
  readonly gpu?: string | null;
  readonly state: string;
  readonly provider_state?: string | null;
  readonly provider_message?: string | null;
  readonly models: readonly string[];
  readonly shared: boolean;
  readonly policy: string;
  readonly overridden?: boolean;
  readonly eligible: boolean;
  readonly reason: string | null;
  readonly warnings: readonly string[];
  readonly last_error?: string | null;
  readonly budget?: { readonly usd_per_day: number | null; readonly usd_per_month: number | null };
  readonly managed?: {
    readonly spend_usd: { session: number; today: number; month: number } | null;
    readonly usd_per_hour: number | null;
    readonly open_obligations: number;
    readonly last_active_at: string;
    readonly idle_pause_min: number;
    readonly paused_by: string | null;
  } | null;
}

interface StateChange {
  readonly at: string;
  readonly state: string;
  readonly reason: string | null;
}

/** How many state changes the page shows (the route keeps more; --json has them all). */
const HISTORY_LINES = 10;

const usd = (n: number | null | undefined) => (n === null || n === undefined ? "no cap" : `$${n.toFixed(2)}`);

export async function describeRented(
  io: CliIo,
  configFile: string | undefined,
  name: string,
  json: boolean,
): Promise<void> {
  const nodes = (await rentedCall(io, configFile, "/pair/v1/rented")) as DescribedNode[];
  const node = nodes.find((n) => n.name === name);
  if (node === undefined) {
    const known = nodes.map((n) => n.name);
    throw new CliFailure(
      `unknown_rented_node: this node sponsors no rented node named "${name}"` +
        (known.length === 0 ? " (it sponsors none)" : ` (it sponsors: ${known.join(", ")})`),
    );
  }
  const history = (await rentedCall(
    io,
    configFile,
    `/pair/v1/rented/history?name=${encodeURIComponent(name)}`,
  )) as StateChange[];
  if (json) {
    io.stdout(`${JSON.stringify({ ...node, history }, null, 2)}\n`);
    return;
  }
  io.stdout(`${describeLines(node, history).join("\n")}\n`);
}

export function describeLines(node: DescribedNode, history: readonly StateChange[]): string[] {
  const m = node.managed ?? null;
  const lines = [
    `${node.name} — Rented · off-LAN, ${node.provider}`,
    ...(node.gpu ? [`  gpu          ${node.gpu}`] : []),
    `  state        ${node.state}${node.provider_state ? ` (provider: ${node.provider_state})` : ""}`,
    ...(node.provider_message ? [`  provider says ${node.provider_message}`] : []),
    `  takes requests ${node.eligible ? "yes" : `no — ${node.reason ?? "ineligible"}`}`,
    `  models       ${node.models.join(", ") || "-"}`,
    `  shared       ${node.shared ? "yes" : "no"}; policy ${node.policy}` +
      (node.overridden === true ? " (changed at run time; pair rented reset restores the config's)" : ""),
  ];
  if (node.budget !== undefined)
    lines.push(`  budget       ${usd(node.budget.usd_per_day)}/day, ${usd(node.budget.usd_per_month)}/month`);
  if (m !== null) {
    if (m.usd_per_hour !== null) lines.push(`  price        $${m.usd_per_hour.toFixed(2)}/h`);
    if (m.spend_usd !== null)
      lines.push(
        `  spent        $${m.spend_usd.session.toFixed(2)} this session, $${m.spend_usd.today.toFixed(2)} today, ` +
          `$${m.spend_usd.month.toFixed(2)} this month`,
      );
    lines.push(`  idle pause   after ${m.idle_pause_min} min; last PAIR workload ${m.last_active_at}`);
    if (m.paused_by !== null) lines.push(`  paused by    ${m.paused_by}`);
    lines.push(`  stop obligations open: ${m.open_obligations}`);
  }
  for (const w of node.warnings) lines.push(`  warning      ${w}`);
  if (node.last_error) lines.push(`  last error   ${node.last_error}`);
  const recent = history.slice(-HISTORY_LINES);
  lines.push(
    recent.length === 0
      ? "  history      (no state change recorded yet)"
      : `  history      (last ${recent.length} of ${history.length}; --json has all)`,
  );
  for (const h of recent) lines.push(`    ${h.at}  ${h.state.padEnd(12)} ${h.reason ?? "—"}`);
  return lines;
}
