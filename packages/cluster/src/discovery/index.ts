/**
 * Discovery: finding the cluster's nodes by mDNS (`_pair._tcp`) and at the static `peers` addresses.
 * A sighting names a node and proves nothing: a paired node's recorded address moves only after an
 * mTLS call under its pin succeeds there; an unpaired node is listed as discovered, not paired, for
 * `pair join`. The public face of this folder.
 * Must not know: the client API, the scheduler, the CLI.
 */

export { checkPeerAddress, type AddressCheck } from "./address-check.js";
export { readPortName } from "./port-name.js";
export {
  DEFAULT_STATIC_MAX_HELLOS,
  StaticProber,
  type StaticAnswer,
  type StaticProbeOptions,
} from "./static-probe.js";
export {
  DEFAULT_DISCOVERY_TIMING,
  clusterDiscovery,
  startDiscovery,
  type ClusterDiscoveryOptions,
  type NodeDiscoveryOptions,
  type Discovery,
  type DiscoveryEvent,
  type DiscoveryOptions,
  type DiscoveryTiming,
  type DiscoveryTrust,
} from "./discovery.js";
export {
  DEFAULT_MDNS_QUERY_INTERVAL_MS,
  resolveMdnsNetwork,
  startMdnsBeacon,
  type MdnsBeacon,
  type MdnsBeaconOptions,
  type MdnsNetwork,
} from "./mdns-beacon.js";
export {
  MDNS_SERVICE_NAME,
  MDNS_SERVICE_TYPE,
  MDNS_TXT_VERSION,
  mdnsAdvert,
  mdnsInstanceName,
  readMdnsResponse,
  readTxt,
  type MdnsAdvert,
  type MdnsGoodbye,
  type MdnsReport,
  type MdnsSelf,
  type MdnsSighting,
} from "./mdns-records.js";
export {
  DEFAULT_SIGHTING_BOOK_LIMITS,
  SightingBook,
  type CheckAddress,
  type DiscoveredNode,
  type PinOf,
  type PinnedAt,
  type Sighting,
  type SightingBookLimits,
  type SightingSource,
} from "./sighting-book.js";
