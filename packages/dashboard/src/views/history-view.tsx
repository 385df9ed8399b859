/**
 * History: finished workloads, newest first — when, model, origin node, serving node, the off-LAN
 * badge, status, first byte, duration, estimated cost — filtered by node (origin or serving) and
 * by model; above it, the estimated cost per day (of what the filters keep).
 * Must not know: how the list is fetched.
 */

import { useState } from "preact/hooks";
import { OffLanBadge } from "../badges.js";
import { DailyCostChart } from "../charts.js";
import { dailyCosts } from "../daily-cost.js";
import { formatCost, formatDuration, formatTime } from "../format.js";
import type { Workload } from "../wire.js";

export function HistoryView({
  history,
  nowMs,
}: {
  readonly history: readonly Workload[];
  readonly nowMs: number;
}) {
  const [node, setNode] = useState("");
  const [model, setModel] = useState("");
  const nodes = [...new Set(history.flatMap((w) => [w.origin_node, w.serving_node ?? ""]))]
    .filter((n) => n !== "")
    .sort();
  const models = [...new Set(history.map((w) => w.model))].sort();
  const shown = history.filter(
    (w) =>
      (node === "" || w.origin_node === node || w.serving_node === node) &&
      (model === "" || w.model === model),
  );
  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label for="filter-node">Node</label>
        <select id="filter-node" value={node} onChange={(e) => setNode(e.currentTarget.value)}>
          <option value="">all nodes</option>
          {nodes.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
        <label for="filter-model">Model</label>
        <select id="filter-model" value={model} onChange={(e) => setModel(e.currentTarget.value)}>
          <option value="">all models</option>
          {models.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
        <span class="count" aria-live="polite">
          {shown.length} of {history.length}
        </span>
      </form>
      <DailyCostChart days={dailyCosts(shown, nowMs)} />
      {shown.length === 0 ? (
        <p class="empty">{history.length === 0 ? "No finished workloads yet." : "None match the filters."}</p>
      ) : (
        <table class="grid">
          <caption class="sr-only">Finished workloads, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Model</th>
              <th scope="col">Origin</th>
              <th scope="col">Serving</th>
              <th scope="col">Where</th>
              <th scope="col">Status</th>
              <th scope="col">First byte</th>
              <th scope="col">Duration</th>
              <th scope="col">Est. cost</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((w) => (
              <tr key={w.id} data-workload={w.id}>
                <td data-label="Started">{formatTime(w.started_at)}</td>
                <th scope="row" data-label="Model">
                  {w.model}
                </th>
                <td data-label="Origin">{w.origin_node}</td>
                <td data-label="Serving">{w.serving_node ?? "—"}</td>
                <td data-label="Where">{w.off_lan ? <OffLanBadge /> : "LAN"}</td>
                <td data-label="Status">
                  {w.status}
                  {w.error_code === null ? "" : ` (${w.error_code})`}
                </td>
                <td data-label="First byte">{formatDuration(w.first_byte_ms)}</td>
                <td data-label="Duration">{formatDuration(w.duration_ms)}</td>
                <td data-label="Est. cost">{formatCost(w.est_cost_usd)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
