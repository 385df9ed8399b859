/**
 * The peer API's paths on the cluster port: what a paired node may ask of another over mTLS
 * (the daemon's cluster-node/peer-routes.ts answers them; discovery and the peer links ask them).
 * Must not know: what is answered, pairing, TLS.
 */

export const PEER_HELLO_PATH = "/pair/v1/peer/hello";
export const PEER_INVENTORY_PATH = "/pair/v1/peer/inventory";
export const PEER_ROUTE_PREFIX = "/pair/v1/peer/route";
export const PEER_CHANGED_PATH = "/pair/v1/peer/changed";
