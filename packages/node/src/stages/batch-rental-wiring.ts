/**
 * `--rent auto`'s hooks on this node: the Jobs hardware list and the create through the rented
 * creator (the hosting contract: ledger reservation first, the window as the job's hard timeout),
 * the node's state and spend from the rented nodes' views, the stop for good (routing `never`, kept in
 * rented-nodes.json so no request — nor a restart — runs a job on it again, then `delete`: a Job is
 * cancelled, an Endpoint deleted; confirmed by the provider's evidence), measured rates from history,
 * whether the cluster serves the model (engines, peers, other rented nodes), and batches' lifecycle
 * events in the rented nodes' state history.
 * Must not know: how a batch decides to rent (batch/batch-rental.ts).
 */

import type { HistoryRow, RecordEvent, RentalHooks } from "../batch/index.js";
import type { WorkloadHistory } from "../history/workload-history.js";
import type { RentedCreator, RentedNodes, RentedStateHistory } from "@pair/sponsor";
import type { ClientApiDeps } from "../server/client-api.js";

export interface RentalWiringDeps {
  readonly creator: RentedCreator;
  readonly rented: RentedNodes;
  readonly history: WorkloadHistory;
  readonly stateHistory: RentedStateHistory;
  /** Where a request for a model may go besides rented nodes: local engines, peers, the aliases. */
  readonly routes: Pick<ClientApiDeps, "inventory" | "peers" | "aliases">;
  /** Something peers see changed (a node was created or stopped). */
  readonly onChange: () => void;
}

export function rentalHooks(d: RentalWiringDeps): RentalHooks {
  return {
    async hardware(credential) {
      const listed = await d.creator.jobHardware(credential ?? undefined);
      if (!listed.ok) throw new Error(`the Jobs hardware could not be listed: ${listed.message}`);
      return listed.value;
    },
    async rent(spec) {
      const created = await d.creator.create({
        name: spec.name,
        provider: "huggingface-job",
        ...(spec.credential === null ? {} : { credential: spec.credential }),
        repo: spec.model,
        flavor: spec.flavor,
        window_min: spec.windowMin,
        // The ledger caps the node at the batch's budget too: never billed past it.
        budget: spec.budgetUsd === null ? { unlimited: true } : { usd_per_day: spec.budgetUsd },
      });
      if (!created.ok) return { ok: false, message: `${created.code}: ${created.message}` };
      d.onChange();
      return { ok: true };
    },
    node(name) {
      const v = d.rented.list().find((n) => n.name === name);
      if (v === undefined) return undefined;
      return {
        serving: v.state === "running" && v.eligible,
        spentUsd: v.managed?.spend_usd?.total ?? 0,
        usdPerHour: v.managed?.usd_per_hour ?? null,
        openObligations: v.managed?.open_obligations ?? 0,
        // A Job in ERROR reads `failed` (hf-job/job-node.ts): it never serves again.
        ...(v.provider_state === "failed"
          ? { failed: v.provider_message ?? v.last_error ?? "its job failed" }
          : {}),
      };
    },
    async stop(name) {
      // The batch is done with it: first no request may wake it again, then its job is cancelled.
      const never = d.rented.override(name, { routing_use: "never" });
      if (!never.ok) return { ok: false, message: `${never.code}: ${never.message}` };
      const done = await d.rented.act(name, "delete");
      if (!done.ok) return { ok: false, message: `${done.error.code}: ${done.error.message}` };
      d.onChange();
      return { ok: true };
    },
    history(): HistoryRow[] {
      return d.history.history({ limit: 10_000 }).map((w) => ({
        model: w.model,
        serving_node: w.servingNode ?? null,
        status: w.status,
        tokens_out: w.tokensOut ?? null,
        duration_ms: w.durationMs ?? null,
      }));
    },
    serves(model, without) {
      const { inventory, peers, aliases } = d.routes;
      return (aliases?.namesOf(model) ?? [model]).some(
        (name) =>
          inventory.serving(name).length > 0 ||
          (peers?.serving(name).length ?? 0) > 0 ||
          (peers?.sponsoring(name).length ?? 0) > 0 ||
          d.rented.serving(name, { fromPeer: false }).usable.some((r) => r.name !== without),
      );
    },
  };
}

/**
 * Routing without the nodes a batch stopped for good: such a node is gone (its job cancelled, never
 * to serve again by itself), so a request for a model only it had gets `model_not_found`, not
 * `rented_node_ineligible` as a node paused by hand would. Read only when a refusal names a node.
 */
export function withoutRetired(deps: ClientApiDeps, retired: () => ReadonlySet<string>): ClientApiDeps {
  const rented = deps.rented;
  if (rented === undefined) return deps;
  return {
    ...deps,
    rented: {
      ...rented,
      serving(model, caller) {
        const s = rented.serving(model, caller);
        const node = s.refusal?.node;
        if (node === undefined || s.refusal?.code !== "rented_node_ineligible" || !retired().has(node))
          return s;
        return { usable: s.usable };
      },
    },
  };
}

export function recordBatchEvent(history: RentedStateHistory): RecordEvent {
  return (batchId, event, reason, atMs) => history.record(batchId, event, reason, atMs);
}
