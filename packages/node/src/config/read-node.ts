/**
 * The `node:` section: identity, data dir, listen addresses, discovery, static peers, API keys and
 * history retention. Whether a client port off loopback may start depends on the API keys in the
 * data dir (`pair apikey create`), so the node decides it at start (`auth_required`), not the config.
 * `api_keys` entries are still read and checked (an id, a credential reference, never a literal key)
 * so existing files stay valid, but they authenticate nobody; the node says so in its log.
 * `allowed_hosts` / `allowed_origins` widen what browsers may reach (browser-access.ts spells them).
 * Must not know: YAML, sockets, the credential store (API keys stay references).
 */

import type { ApiKeyConfig, ConfigHost, HostPort, NodeSettings } from "./config-types.js";
import { LIMITS, MS_PER_DAY, NODE_DEFAULTS } from "./defaults.js";
import { parseAllowedHost, parseOriginPattern } from "./browser-access.js";
import { describe, Section } from "./field-reader.js";
import { expandHome } from "./home-path.js";
import { parseHostPort, type Parsed } from "./net-address.js";
import type { ProblemList } from "./problems.js";

export const NODE_KEYS = [
  "name",
  "data_dir",
  "listen",
  "cluster_listen",
  "discovery",
  "peers",
  "api_keys",
  "history",
  "allowed_hosts",
  "allowed_origins",
  "max_upstream_body_mb",
] as const;
const API_KEY_KEYS = ["id", "key_credential"] as const;

/** A default address, spelled as in docs/reference.md. */
export function defaultAddress(text: string): HostPort {
  const parsed = parseHostPort(text);
  if (!parsed.ok) throw new Error(`bad built-in default address ${text}`);
  return parsed.value;
}

/** The host name made into a valid node name (`pair-node` when nothing is left). */
export function defaultNodeName(hostName: string): string {
  const cleaned = hostName
    .replace(/[^A-Za-z0-9._-]/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, LIMITS.maxNameLength);
  return cleaned === "" ? "pair-node" : cleaned;
}

function readApiKeys(node: Section): ApiKeyConfig[] {
  const keys: ApiKeyConfig[] = [];
  const seen = new Set<string>();
  node.list("api_keys", LIMITS.maxApiKeys).forEach((entry, index) => {
    const item = Section.open(node.problems, entry, [...node.at("api_keys"), index], API_KEY_KEYS);
    const id = item.name("id", { required: true });
    const keyCredential = item.credential("key_credential", { required: true });
    if (id !== undefined && seen.has(id)) {
      item.report("id", "duplicate_name", "another API key has the same id");
    }
    if (id !== undefined) seen.add(id);
    if (id !== undefined && keyCredential !== undefined) keys.push({ id, keyCredential });
  });
  return keys;
}

function readPeers(node: Section): HostPort[] {
  const peers: HostPort[] = [];
  node.list("peers", LIMITS.maxPeers).forEach((entry, index) => {
    const path = [...node.at("peers"), index];
    if (typeof entry !== "string") {
      node.problems.add(path, "invalid_type", `expected a string "host:port", got ${describe(entry)}`);
      return;
    }
    const parsed = parseHostPort(entry);
    if (parsed.ok) peers.push(parsed.value);
    else node.problems.add(path, parsed.code, parsed.message);
  });
  return peers;
}

/** A list of strings each checked by `parse` (normalised); a bad entry is reported at its index. */
function readParsedList(
  node: Section,
  key: string,
  max: number,
  parse: (text: string) => Parsed<string>,
): string[] {
  const out: string[] = [];
  node.list(key, max).forEach((entry, index) => {
    const path = [...node.at(key), index];
    if (typeof entry !== "string") {
      node.problems.add(path, "invalid_type", `expected a string, got ${describe(entry)}`);
      return;
    }
    const parsed = parse(entry);
    if (parsed.ok) out.push(parsed.value);
    else node.problems.add(path, parsed.code, parsed.message);
  });
  return out;
}

export function readNode(problems: ProblemList, value: unknown, host: ConfigHost): NodeSettings {
  const node = Section.open(problems, value, ["node"], NODE_KEYS);
  const name = node.name("name") ?? defaultNodeName(host.hostName);
  const defaultDataDir = expandHome(NODE_DEFAULTS.data_dir, host.homeDir);
  const dataDir =
    node.filePath("data_dir", host.homeDir) ?? host.dataDir ?? (defaultDataDir.ok ? defaultDataDir.path : "");
  const listen = node.hostPort("listen") ?? defaultAddress(NODE_DEFAULTS.listen);
  const clusterListen = node.hostPort("cluster_listen") ?? defaultAddress(NODE_DEFAULTS.cluster_listen);
  const discovery = node.section("discovery", ["mdns"]);
  const peers = readPeers(node);
  const apiKeys = readApiKeys(node);
  const history = node.section("history", ["max_rows", "max_days"]);
  const maxRows = history.integer(
    "max_rows",
    { min: 1, max: LIMITS.maxHistoryRows },
    NODE_DEFAULTS.history_max_rows,
  );
  const maxAgeMs = history.durationMs(
    "max_days",
    { ms: MS_PER_DAY, label: "days" },
    NODE_DEFAULTS.history_max_days * MS_PER_DAY,
    LIMITS.maxHistoryDays * MS_PER_DAY,
  );
  const maxUpstreamBodyMb = node.integer(
    "max_upstream_body_mb",
    { min: 1, max: LIMITS.maxUpstreamBodyMb },
    NODE_DEFAULTS.max_upstream_body_mb,
  );
  return {
    name,
    dataDir,
    listen,
    clusterListen,
    discovery: { mdns: discovery.boolean("mdns", NODE_DEFAULTS.mdns) },
    peers,
    apiKeys,
    history: { maxRows, maxAgeMs },
    allowedHosts: readParsedList(node, "allowed_hosts", LIMITS.maxAllowedHosts, parseAllowedHost),
    allowedOrigins: readParsedList(node, "allowed_origins", LIMITS.maxAllowedOrigins, parseOriginPattern),
    maxUpstreamBodyBytes: maxUpstreamBodyMb * 1024 * 1024,
  };
}
