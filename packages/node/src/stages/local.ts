/**
 * The local stage: this machine's own serving. The engines' inventory (probed), the scheduler (slots
 * per upstream, one bounded queue), the workload history in the data dir and their metrics. Built
 * after both ports are bound: opening the history marks a previous process's running rows
 * interrupted, which a second node refused at its port must never do. Its drain is the stop's grace
 * (the requests in flight are the history's running rows); the history closes last of all.
 * Must not know: routes, peers' inventories, rented nodes.
 */

import { join } from "node:path";
import { HOLDING_RUNTIME, SYSTEM_CLOCK } from "@pair/cluster";
import type { LocalInventory } from "../cluster-node/index.js";
import { EngineInventory } from "../engines/engine-inventory.js";
import { WorkloadHistory } from "../history/workload-history.js";
import type { NodeOptions } from "./node-options.js";
import { Scheduler } from "../scheduler/scheduler.js";
import type { ClusterStage } from "./cluster.js";
import type { Core } from "./core.js";
import type { Stage } from "./stage.js";

export interface LocalStage extends Stage {
  readonly history: WorkloadHistory;
  readonly inventory: EngineInventory;
  readonly scheduler: Scheduler;
  /** This node's own inventory for its peers: local engines only, never a peer's models. */
  forPeers(): LocalInventory;
  start(): Promise<void>;
}

export function localStage(options: NodeOptions, core: Core, cluster: ClusterStage): LocalStage {
  const { config } = options;
  const { log, metrics } = core;
  const history = new WorkloadHistory({
    path: join(core.dataDir, "history.db"),
    maxRows: config.node.history.maxRows,
    maxDays: config.node.history.maxAgeMs / 86_400_000,
    runtime: core.runtime,
    ...(options.tuning?.historyOnThread === undefined
      ? {}
      : { writeOnThread: options.tuning?.historyOnThread }),
  });
  const inventory = new EngineInventory({
    engines: config.engines,
    dispatcher: core.dispatcher,
    runtime: core.runtime,
    onChange: (engines) => {
      for (const e of engines)
        log(
          `engine ${e.spec.name}: ${e.healthy ? `up, ${e.models.length} model(s)` : `down (${e.lastError ?? "?"})`}`,
        );
      cluster.announce("changed");
    },
  });
  const scheduler = new Scheduler({
    maxQueued: options.overrides?.maxQueued ?? 256,
    maxQueueWaitMs: options.overrides?.maxQueueWaitMs ?? 30_000,
    // A waiter's request holds its socket open; the runtime's timers never hold the process.
    runtime: core.runtime,
  });
  for (const e of config.engines) {
    metrics.gauge("pair_engine_in_flight", "Requests in flight per engine.", { engine: e.name }, () =>
      scheduler.inFlight(e.name),
    );
    metrics.gauge("pair_engine_up", "1 when the engine answered its last probe.", { engine: e.name }, () =>
      inventory.engines.find((s) => s.spec.name === e.name)?.healthy === true ? 1 : 0,
    );
  }
  metrics.gauge("pair_queue_depth", "Requests waiting for a slot.", {}, () => scheduler.queued());
  metrics.gauge("pair_workloads_running", "Workloads in flight.", {}, () => history.running().length);
  return {
    name: "local",
    history,
    inventory,
    scheduler,
    forPeers: () => localInventory(inventory, scheduler),
    start: () => inventory.start(),
    quiesce: () => inventory.stop(),
    // An exit is bounded in real time, whatever clock the node runs on (a test's virtual one).
    drain: async (graceMs) => {
      const deadline = SYSTEM_CLOCK.now().monoMs + graceMs;
      while (history.running().length > 0 && SYSTEM_CLOCK.now().monoMs < deadline)
        await HOLDING_RUNTIME.timers.sleep(25);
    },
    release: () => history.close(),
  };
}

function localInventory(inventory: EngineInventory, scheduler: Scheduler): LocalInventory {
  const healthy = inventory.engines.filter((e) => e.healthy);
  return {
    models: [...inventory.models()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([model, engines]) => {
        // context: the largest window among the engines serving it (this node picks the one that fits)
        let window: number | undefined;
        for (const e of inventory.serving(model)) {
          const w = e.windows?.get(model)?.tokens;
          if (w !== undefined && (window === undefined || w > window)) window = w;
        }
        return {
          model,
          engines: engines.length,
          ...(window === undefined ? {} : { context_window: window }),
        };
      }),
    in_flight: inventory.engines.reduce((sum, e) => sum + scheduler.inFlight(e.spec.name), 0),
    capacity: healthy.reduce((sum, e) => sum + e.spec.maxConcurrent, 0),
  };
}
