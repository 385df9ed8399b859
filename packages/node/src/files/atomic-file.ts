// Lives in @pair/cluster, the lowest package that writes one (peers.json); the daemon's stores
// (API keys, rented state, batches) import it from here.
export { syncDirectory, writeFileAtomically } from "@pair/cluster";
