/**
 * One PAIR node, composed from stages (stages/): core (log, keys, the client port) → cluster (the
 * cluster port, peers) → local (engines, scheduler, history) → sponsor (rented nodes) → serve (the
 * routes, live events, timers). Each is built on the ones before and says how it stops; `close` runs
 * the stop's phases through them last-built first (stages/stage.ts). A `listen` beyond loopback needs
 * an active API key.
 * Must not know: command-line parsing, where the config came from, what any stage holds.
 */

import type { ClusterNode, PeerMembership } from "./cluster-node/index.js";
import type { EngineInventory } from "./engines/engine-inventory.js";
import type { WorkloadHistory } from "./history/workload-history.js";
import type { NodeOptions } from "./stages/node-options.js";
import type { JobNodes, ManagedEndpoints, RunpodPodNodes } from "@pair/sponsor";
import { startClusterStage } from "./stages/cluster.js";
import { startCore } from "./stages/core.js";
import { localStage } from "./stages/local.js";
import { serveStage } from "./stages/serve.js";
import { sponsorStage } from "./stages/sponsor.js";
import { stopStages, type Stage } from "./stages/stage.js";
import type { UiSessions } from "./ui/index.js";

export type { NodeOptions } from "./stages/node-options.js";
export { CLIENT_HEADERS_TIMEOUT_MS, CLIENT_MAX_CONNECTIONS, PAIR_VERSION } from "./stages/core.js";
export { LISTEN_ERROR_CODES, ListenError } from "./stages/listen-error.js";
export { MANAGED_FIRST_PASS_WAIT_MS } from "./stages/sponsor.js";

export interface RunningNode {
  readonly name: string;
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  readonly adminToken: string;
  readonly inventory: EngineInventory;
  readonly history: WorkloadHistory;
  /** Identity, pinned peers, pairing and the cluster port (`cluster.port`). */
  readonly cluster: ClusterNode;
  /** The paired peers' state and inventories, kept fresh. */
  readonly membership: PeerMembership;
  /** Dashboard sign-in codes and sessions (in memory; `pair ui` asks for a code over the admin API). */
  readonly uiSessions: UiSessions;
  /** Managed Hugging Face endpoints (adoption, wake, idle and budget pauses, pause on exit). */
  readonly managed: ManagedEndpoints;
  /** Managed Runpod pods (made on demand; idle, budget and exit terminations). */
  readonly runpod: RunpodPodNodes;
  /** Managed Hugging Face Jobs (run on demand for a batch window; window, idle, budget and exit cancels). */
  readonly jobs: JobNodes;
  /** Stop accepting, wait up to `graceMs` for requests in flight, then end the rest. */
  close(graceMs?: number): Promise<void>;
}

export async function startNode(options: NodeOptions): Promise<RunningNode> {
  const core = await startCore(options);
  const stages: Stage[] = [core];
  const built = <S extends Stage>(stage: S): S => {
    stages.push(stage);
    return stage;
  };
  try {
    const cluster = built(await startClusterStage(options, core));
    const local = built(localStage(options, core, cluster));
    const sponsor = built(sponsorStage(options, core, cluster, local));
    cluster.answerInventory(() => ({ ...local.forPeers(), rented: sponsor.rented.peerViews() }));
    // The engines' probes and the rented nodes' first pass together: neither waits for the other.
    await Promise.all([local.start(), sponsor.start()]);
    await cluster.start();
    built(serveStage(options, { core, cluster, local, sponsor }));
    let closing: Promise<void> | undefined;
    return {
      name: core.config.node.name,
      url: core.url,
      port: core.port,
      dataDir: core.dataDir,
      adminToken: core.adminToken,
      inventory: local.inventory,
      history: local.history,
      cluster: cluster.cluster,
      membership: cluster.membership,
      uiSessions: core.uiSessions,
      managed: sponsor.managed,
      runpod: sponsor.runpod,
      jobs: sponsor.jobs,
      close: (graceMs = 10_000) =>
        (closing ??= stopStages(stages, graceMs).then((failures) => {
          if (failures.length > 0) throw failures[0];
        })),
    };
  } catch (error) {
    // What was built is released (ports, files); the start's own error is the one that counts.
    for (const failure of await stopStages(stages, 0))
      core.log(`stop after a failed start: ${String(failure)}`);
    throw error;
  }
}
