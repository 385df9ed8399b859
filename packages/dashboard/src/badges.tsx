/**
 * Small labels the views share: a node's state, the `Rented · off-LAN` label, the off-LAN and
 * warming badges of a workload. Each says its meaning in text (colour only adds to it).
 * Must not know: where the values come from.
 */

import { reasonBadgeText, stateText, stateTone, withReadableTimes } from "./format.js";

export function StateBadge({ state }: { readonly state: string }) {
  return <span class={`badge tone-${stateTone(state)}`}>{stateText(state)}</span>;
}

export function KindLabel({ kind, label }: { readonly kind: string; readonly label?: string }) {
  if (kind === "rented") return <span class="badge rented">{label ?? "Rented · off-LAN"}</span>;
  return <span class="badge kind">{kind === "self" ? "this node" : "peer"}</span>;
}

export function OffLanBadge() {
  return (
    <span class="badge off-lan" title="served outside the LAN, by a rented node">
      off-LAN
    </span>
  );
}

export function WarmingBadge() {
  return (
    <span class="badge tone-busy" title="waiting for a rented node to start">
      warming
    </span>
  );
}

/** Whether a node takes requests: `yes`, or a short reason badge with the full text as its title. */
export function TakesRequests({
  eligible,
  reason,
}: {
  readonly eligible: boolean;
  readonly reason: string | null;
}) {
  if (eligible) return <>yes</>;
  const full = withReadableTimes(reason ?? "not eligible");
  return (
    <span class="badge tone-bad reason" title={full}>
      no: {reasonBadgeText(full)}
      <span class="sr-only"> ({full})</span>
    </span>
  );
}
