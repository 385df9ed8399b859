/**
 * @pair/cluster: how PAIR nodes trust and reach each other. `peers/` the node's identity, the pinned
 * peers (peers.json), the mTLS peer server, the cluster port and the pinned peer client; `pairing/`
 * the PIN pairing protocol core (CPace); `discovery/` mDNS and static addresses (sightings, never
 * trust). Below them: `errors/` the base of every thrown PAIR error, `files/` atomic file writes,
 * `runtime/` the one time seam (clock and timers, real and virtual); they live here because this is the lowest package that needs them, and the daemon re-exports them.
 * Must not know: the daemon (routes, the scheduler, rented nodes, the config file).
 */

export * from "./errors/coded-error.js";
export * from "./files/atomic-file.js";
export * from "./runtime/index.js";
export * from "./peers/index.js";
export * from "./pairing/index.js";
export * from "./discovery/index.js";
