/**
 * Nodes: every node of the cluster as this node sees it — itself, its paired peers, the rented
 * nodes it sponsors and those its peers share — with kind, label, state, GPU, provider, price,
 * models, load, shared flag, policy and whether it takes requests (with the reason when not).
 * Must not know: how the list is fetched (it is given), routes other than the detail link.
 */

import { KindLabel, StateBadge, TakesRequests } from "../badges.js";
import { formatHourly, formatLoad, formatModels, providerName, type ContextWindows } from "../format.js";
import { routeHref } from "../route.js";
import type { SpendSummary } from "../spend-summary.js";
import type { NodeRow, SpendSeries } from "../wire.js";
import { SpendOverview } from "./spend-overview.js";

export function NodesView({
  nodes,
  summary,
  spend,
  windows,
}: {
  readonly nodes: readonly NodeRow[];
  /** Each node's context window per model (`/pair/v1/models`). */
  readonly windows: ContextWindows;
  readonly summary?: SpendSummary;
  /** This node's managed rented nodes' billed spend over the last 24 h and 30 days. */
  readonly spend?: readonly SpendSeries[] | undefined;
}) {
  return (
    <section aria-labelledby="nodes-title">
      <div class="title-row">
        <h2 id="nodes-title">Nodes</h2>
        <a class="button-link" href={routeHref({ view: "add" })}>
          Add rented GPU
        </a>
      </div>
      {summary === undefined ? null : <SpendOverview summary={summary} spend={spend ?? []} />}
      <table class="grid">
        <caption class="sr-only">Every node of the cluster, local, peers and rented</caption>
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">Kind</th>
            <th scope="col">State</th>
            <th scope="col">GPU</th>
            <th scope="col">Provider</th>
            <th scope="col">Price</th>
            <th scope="col">Models</th>
            <th scope="col">Load</th>
            <th scope="col">Shared</th>
            <th scope="col">Policy</th>
            <th scope="col">Takes requests</th>
          </tr>
        </thead>
        <tbody>
          {nodes.map((n) => (
            <tr key={`${n.kind}:${n.name}`} data-node={n.name}>
              <th scope="row" data-label="Node">
                <a href={routeHref({ view: "node", name: n.name })}>{n.name}</a>
              </th>
              <td data-label="Kind">
                <KindLabel kind={n.kind} {...(n.kind === "rented" ? { label: n.label } : {})} />
              </td>
              <td data-label="State">
                <StateBadge state={n.state} />
              </td>
              <td data-label="GPU">{n.kind === "rented" ? (n.gpu ?? "—") : "—"}</td>
              <td data-label="Provider">
                {n.kind === "rented" ? `${providerName(n.provider)} · via ${n.sponsor}` : "on the LAN"}
              </td>
              <td data-label="Price">{n.kind === "rented" ? formatHourly(n.usd_per_hour) : "—"}</td>
              <td data-label="Models">{formatModels(n.models, n.name, windows)}</td>
              <td data-label="Load">{n.kind === "rented" ? "—" : formatLoad(n.in_flight, n.capacity)}</td>
              <td data-label="Shared">{n.kind === "rented" ? (n.shared ? "shared" : "not shared") : "—"}</td>
              <td data-label="Policy">{n.kind === "rented" ? n.policy : "—"}</td>
              <td data-label="Takes requests">
                {n.kind === "rented" ? (
                  <TakesRequests eligible={n.eligible} reason={n.reason} />
                ) : n.state === "up" ? (
                  "yes"
                ) : (
                  "no"
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
