/**
 * Node detail. A rented node gets its own view (rented-detail.tsx: facts, cost, state history, the
 * sponsor's actions). Local and peer nodes show state, load, models and when they last answered.
 * Must not know: HTTP (changes go through the callbacks it is given).
 */

import { KindLabel, StateBadge } from "../badges.js";
import { formatLoad, formatModels, formatTime, type ContextWindows } from "../format.js";
import type { NodeRow, SpendSeries, SponsoredNode, StateChange } from "../wire.js";
import { Fact, RentedDetail, type RentedActions } from "./rented-detail.js";

export type { RentedActions } from "./rented-detail.js";

export interface NodeDetailProps {
  readonly name: string;
  readonly nodes: readonly NodeRow[];
  /** Each node's context window per model (`/pair/v1/models`). */
  readonly windows: ContextWindows;
  /** This node's name: a rented node it sponsors gets actions. */
  readonly selfName: string;
  /** The rented nodes this node sponsors (GET /pair/v1/rented). */
  readonly sponsored: readonly SponsoredNode[] | undefined;
  /** The rented node's state history (sponsor only). */
  readonly history: readonly StateChange[] | undefined;
  /** Its billed spend over the last 24 h and 30 days (sponsor, managed nodes only). */
  readonly spend: readonly SpendSeries[] | undefined;
  readonly actions: RentedActions;
  readonly nowMs: number;
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
        <RentedDetail
          node={node}
          selfName={props.selfName}
          sponsored={
            node.sponsor === props.selfName ? props.sponsored?.find((s) => s.name === node.name) : undefined
          }
          history={node.sponsor === props.selfName ? props.history : undefined}
          spend={node.sponsor === props.selfName ? props.spend : undefined}
          actions={props.actions}
          windows={props.windows}
          nowMs={props.nowMs}
          refresh={props.refresh}
        />
      ) : (
        <dl class="facts">
          <Fact term="Kind">
            <KindLabel kind={node.kind} />
          </Fact>
          <Fact term="State">
            <StateBadge state={node.state} />
          </Fact>
          <Fact term="Load">{formatLoad(node.in_flight, node.capacity)} requests</Fact>
          <Fact term="Models">{formatModels(node.models, node.name, props.windows)}</Fact>
          <Fact term="Last answered">{formatTime(node.last_seen)}</Fact>
          {node.address === undefined ? null : <Fact term="Cluster address">{node.address}</Fact>}
          {node.last_error === undefined ? null : <Fact term="Last error">{node.last_error}</Fact>}
        </dl>
      )}
    </section>
  );
}
