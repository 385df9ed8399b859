/**
 * Jobs: the workloads running now on this node — model, origin node → serving node, the off-LAN
 * badge when a rented node serves it, the warming badge while that node starts, time so far.
 * Must not know: how the list is fetched.
 */

import { OffLanBadge, WarmingBadge } from "../badges.js";
import { formatDuration } from "../format.js";
import type { Workload } from "../wire.js";

export function JobsView({ jobs, nowMs }: { readonly jobs: readonly Workload[]; readonly nowMs: number }) {
  return (
    <section aria-labelledby="jobs-title">
      <h2 id="jobs-title">Jobs</h2>
      {jobs.length === 0 ? (
        <p class="empty">No workloads running now. Finished ones are under History.</p>
      ) : (
        <table class="grid">
          <caption class="sr-only">Workloads running now</caption>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Origin → serving</th>
              <th scope="col">Where</th>
              <th scope="col">Elapsed</th>
              <th scope="col">Requester</th>
            </tr>
          </thead>
          <tbody>
            {jobs.map((j) => (
              <tr key={j.id} data-workload={j.id}>
                <th scope="row" data-label="Model">
                  {j.model}
                </th>
                <td data-label="Origin → serving">
                  {j.origin_node} → {j.serving_node ?? "choosing…"}
                </td>
                <td data-label="Where">
                  {j.off_lan ? <OffLanBadge /> : "LAN"} {j.warming ? <WarmingBadge /> : null}
                </td>
                <td data-label="Elapsed">{formatDuration(nowMs - Date.parse(j.started_at))}</td>
                <td data-label="Requester">{j.requester}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
