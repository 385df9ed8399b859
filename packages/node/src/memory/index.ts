/**
 * The node's memory: giving back what a load grew once the node is idle again.
 * Must not know: what the node serves.
 */

export {
  checkIdleCollectPolicy,
  decideIdleCollect,
  DEFAULT_IDLE_COLLECT,
  INITIAL_IDLE_COLLECT,
  type IdleCollection,
  type IdleCollectPolicy,
  type IdleCollectState,
} from "./idle-collect.js";
export {
  exposedGc,
  IDLE_COLLECT_CHECK_MS,
  startIdleCollector,
  type IdleCollectorOptions,
} from "./idle-collector.js";
