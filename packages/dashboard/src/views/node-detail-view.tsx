/**
 * Node detail. A rented node shows its state, why it does not take requests, the provider's message
 * and warnings; on its sponsor, also the share switch and the routing policy, changed through the
 * admin API. Elsewhere (a peer) the same facts, no actions: they belong to the sponsor. Local and
 * peer nodes show state, load, models and when they last answered.
 * Must not know: HTTP (changes go through the callbacks it is given).
 */

import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { KindLabel, StateBadge } from "../badges.js";
import { formatHourly, formatLoad, formatTime } from "../format.js";
import { ROUTING_USES, type NodeRow, type RentedRow, type RoutingUse, type SponsoredNode } from "../wire.js";

export interface RentedActions {
  setShare(name: string, share: boolean): Promise<unknown>;
  setPolicy(name: string, use: RoutingUse): Promise<unknown>;
}

export interface NodeDetailProps {
  readonly name: string;
  readonly nodes: readonly NodeRow[];
  /** This node's name: a rented node it sponsors gets actions. */
  readonly selfName: string;
  /** The rented nodes this node sponsors (GET /pair/v1/rented). */
  readonly sponsored: readonly SponsoredNode[] | undefined;
  readonly actions: RentedActions;
  /** Ask the node again now (after a change). */
  readonly refresh: () => void;
}

export function NodeDetailView(props: NodeDetailProps) {
  const node = props.nodes.find((n) => n.name === props.name);
  return (
    <section aria-labelledby="detail-title">
      <p>
        <a href="#/nodes">← All nodes</a>
      </p>
      <h2 id="detail-title">{props.name}</h2>
      {node === undefined ? (
        <p role="status">No node named “{props.name}” in this node's view of the cluster.</p>
      ) : node.kind === "rented" ? (
        <RentedDetail {...props} node={node} />
      ) : (
        <dl class="facts">
          <Fact term="Kind">
            <KindLabel kind={node.kind} />
          </Fact>
          <Fact term="State">
            <StateBadge state={node.state} />
          </Fact>
          <Fact term="Load">{formatLoad(node.in_flight, node.capacity)} requests</Fact>
          <Fact term="Models">{node.models.length === 0 ? "none" : node.models.join(", ")}</Fact>
          <Fact term="Last answered">{formatTime(node.last_seen)}</Fact>
          {node.address === undefined ? null : <Fact term="Cluster address">{node.address}</Fact>}
          {node.last_error === undefined ? null : <Fact term="Last error">{node.last_error}</Fact>}
        </dl>
      )}
    </section>
  );
}

function RentedDetail(props: NodeDetailProps & { readonly node: RentedRow }) {
  const { node } = props;
  const own = node.sponsor === props.selfName;
  const sponsored = own ? props.sponsored?.find((s) => s.name === node.name) : undefined;
  const warnings = sponsored?.warnings ?? node.warnings ?? [];
  return (
    <>
      <dl class="facts">
        <Fact term="Kind">
          <KindLabel kind="rented" label={node.label} />
        </Fact>
        <Fact term="State">
          <StateBadge state={node.state} />
        </Fact>
        <Fact term="Takes requests">{node.eligible ? "yes" : `no: ${node.reason ?? "not eligible"}`}</Fact>
        <Fact term="Provider">{node.provider}</Fact>
        <Fact term="Sponsor">{own ? `${node.sponsor} (this node)` : node.sponsor}</Fact>
        <Fact term="GPU">{node.gpu ?? "—"}</Fact>
        <Fact term="Price">{formatHourly(node.usd_per_hour)}</Fact>
        <Fact term="Models">{node.models.length === 0 ? "none" : node.models.join(", ")}</Fact>
        <Fact term="Shared with the cluster">{node.shared ? "yes" : "no"}</Fact>
        <Fact term="Routing policy">{node.policy}</Fact>
        {sponsored?.last_error == null ? null : (
          <Fact term="Provider message / last error">{sponsored.last_error}</Fact>
        )}
        {sponsored?.credential == null ? null : <Fact term="Credential (name)">{sponsored.credential}</Fact>}
      </dl>
      {warnings.length === 0 ? null : (
        <div class="warnings" role="note" aria-label="Warnings">
          <h3>Warnings</h3>
          <ul>
            {warnings.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </div>
      )}
      {own ? (
        <SponsorActions {...props} />
      ) : (
        <p class="note">
          Its sponsor, {node.sponsor}, holds this node: sharing and policy are changed on {node.sponsor}'s
          dashboard.
        </p>
      )}
    </>
  );
}

function SponsorActions(props: NodeDetailProps & { readonly node: RentedRow }) {
  const { node, actions, refresh } = props;
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ text: string; error: boolean } | undefined>();
  const [policy, setPolicy] = useState<RoutingUse>(node.policy);
  // While a change is on its way the controls ignore clicks but stay focusable (`aria-disabled`,
  // not `disabled`, which would drop the keyboard focus to the page).
  const run = async (what: () => Promise<unknown>, done: string) => {
    if (busy) return;
    setBusy(true);
    try {
      await what();
      setMessage({ text: done, error: false });
      refresh();
    } catch (error) {
      setMessage({ text: error instanceof Error ? error.message : String(error), error: true });
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="actions" aria-labelledby="actions-title">
      <h3 id="actions-title">Sponsor's actions</h3>
      <div class="action-row">
        <span id="share-label">Share with the cluster</span>
        <button
          type="button"
          role="switch"
          aria-checked={node.shared}
          aria-labelledby="share-label"
          class={`switch ${node.shared ? "on" : "off"}`}
          aria-disabled={busy}
          onClick={() =>
            void run(
              () => actions.setShare(node.name, !node.shared),
              node.shared ? `${node.name} is no longer shared` : `${node.name} is shared with the cluster`,
            )
          }
        >
          {node.shared ? "On" : "Off"}
        </button>
      </div>
      <form
        class="action-row"
        onSubmit={(e) => {
          e.preventDefault();
          if (policy === node.policy) return;
          void run(() => actions.setPolicy(node.name, policy), `${node.name}: routing policy ${policy}`);
        }}
      >
        <label for="policy">Routing policy</label>
        <select id="policy" value={policy} onChange={(e) => setPolicy(e.currentTarget.value as RoutingUse)}>
          {ROUTING_USES.map((u) => (
            <option key={u} value={u}>
              {u}
            </option>
          ))}
        </select>
        <button type="submit" aria-disabled={busy || policy === node.policy}>
          Apply
        </button>
      </form>
      <p role="status" aria-live="polite" class={message?.error === true ? "error" : "ok"}>
        {message?.text ?? ""}
      </p>
    </section>
  );
}

function Fact({ term, children }: { readonly term: string; readonly children: ComponentChildren }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}
