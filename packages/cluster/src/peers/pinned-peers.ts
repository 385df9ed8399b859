/**
 * The trust store: the peers whose certificates this node pinned at pairing, kept in
 * `<data_dir>/peers.json` (0600, replaced atomically: temp file, fsync, rename). A revoked peer stays
 * recorded (who, when) but is never accepted again unless it is pinned anew. Every record is checked
 * against its certificate when loaded, so an edited file cannot make a pin say something else.
 * A peer's recorded address moves only through `relocate`, which the caller calls after it reached
 * the pinned certificate there (discovery does: a sighting alone proves nothing).
 * One process owns the file (the node); changes are reported through the single `onChange` option.
 * Must not know: TLS, sockets, how pairing proves a certificate (the PIN exchange).
 */

import type { Clock } from "@pair/provision";
import { writeFileAtomically } from "../files/atomic-file.js";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ClusterError } from "./cluster-error.js";
import { readNodeCertificate } from "./node-certificate.js";

export const PEERS_FILE = "peers.json";
export const PEERS_FILE_VERSION = 1;
/** Peers trusted at once (config's LIMITS.maxPeers). */
export const MAX_PINNED_PEERS = 256;
/** Revoked records kept for the record; beyond this the oldest revocations are forgotten. */
export const MAX_REVOKED_PEERS_KEPT = 256;
/** The same rule as a configured node name: letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const PEER_NAME_MAX_CHARS = 63;
const PEER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** One record of peers.json. Times are ISO 8601 (UTC). */
export interface PinnedPeer {
  readonly node_id: string;
  readonly name: string;
  /** The peer's certificate alone, PEM. */
  readonly cert_pem: string;
  /** SHA-256 of the certificate's DER, lowercase hex. */
  readonly fingerprint: string;
  readonly paired_at: string;
  readonly revoked_at?: string;
  /**
   * Where the peer's cluster port was reached (`HOST:PORT`), recorded at pairing; membership polls
   * it. Records from before it was recorded have none and are simply not polled.
   */
  readonly address?: string;
}

/** What the peer server needs: the pins in force now. */
export interface PinnedPeerView {
  /** Peers not revoked. */
  active(): readonly PinnedPeer[];
  /** The non-revoked peer with this certificate fingerprint. */
  findActive(fingerprint: string): PinnedPeer | undefined;
}

export interface PinRequest {
  readonly name: string;
  readonly certPem: string;
  /** The peer's cluster port address (`HOST:PORT`), when known (left out when not one). */
  readonly address?: string;
}

export type PinResult =
  | { readonly ok: true; readonly peer: PinnedPeer }
  | {
      readonly ok: false;
      readonly code: "unfit_certificate" | "invalid_name" | "too_many_peers";
      readonly message: string;
    };

export type RevokeResult =
  | { readonly ok: true; readonly peer: PinnedPeer; readonly alreadyRevoked: boolean }
  | { readonly ok: false; readonly code: "unknown_peer"; readonly message: string };

export type PeersChange =
  | { readonly kind: "pinned"; readonly peer: PinnedPeer }
  | { readonly kind: "revoked"; readonly peer: PinnedPeer }
  | { readonly kind: "moved"; readonly peer: PinnedPeer; readonly from: string | undefined };

export type RelocateResult =
  | { readonly ok: true; readonly peer: PinnedPeer; readonly changed: boolean }
  | {
      readonly ok: false;
      readonly code: "unknown_peer" | "certificate_changed" | "invalid_address";
      readonly message: string;
    };

export interface PinnedPeersOptions {
  /** Its wall time: `paired_at`, `revoked_at`. */
  readonly clock: Clock;
  /** Called after a change is on disk. */
  readonly onChange?: (change: PeersChange) => void;
}

/** Open the trust store of `dataDir` (empty if peers.json does not exist yet). */
export function openPinnedPeers(dataDir: string, options: PinnedPeersOptions): PinnedPeers {
  const path = join(dataDir, PEERS_FILE);
  return new PinnedPeers(path, readPeersFile(path), options);
}

/** Exported as a type only: the one way to get a store is `openPinnedPeers`, which checks the file. */
export type { PinnedPeers };

class PinnedPeers implements PinnedPeerView {
  readonly path: string;
  readonly #options: PinnedPeersOptions;
  #records: readonly PinnedPeer[];
  #active: { readonly of: readonly PinnedPeer[]; readonly peers: readonly PinnedPeer[] } | undefined;

  constructor(path: string, records: readonly PinnedPeer[], options: PinnedPeersOptions) {
    this.path = path;
    this.#records = records;
    this.#options = options;
  }

  /**
   * Trust `certPem` as node `name`. Pinning a node id already recorded (revoked or not) replaces its
   * record: the PIN exchange that led here is the fresh decision.
   */
  pin(request: PinRequest): PinResult {
    const read = readNodeCertificate(request.certPem);
    if (!read.ok)
      return { ok: false, code: "unfit_certificate", message: `not a node certificate: ${read.reason}` };
    if (!isPeerName(request.name))
      return {
        ok: false,
        code: "invalid_name",
        message: `a peer name is 1 to ${PEER_NAME_MAX_CHARS} letters, digits, ".", "_" or "-", starting with a letter or digit`,
      };
    const { nodeId, fingerprint, pem } = read.certificate;
    const others = this.#records.filter((r) => r.node_id !== nodeId);
    if (others.filter((r) => r.revoked_at === undefined).length >= MAX_PINNED_PEERS)
      return {
        ok: false,
        code: "too_many_peers",
        message: `at most ${MAX_PINNED_PEERS} peers can be paired`,
      };
    const peer: PinnedPeer = Object.freeze({
      node_id: nodeId,
      name: request.name,
      cert_pem: pem,
      fingerprint,
      paired_at: new Date(this.#options.clock.now().wallMs).toISOString(),
      // An address that is not HOST:PORT is left out: the peer is trusted, just not polled.
      ...(request.address !== undefined && isPeerAddress(request.address)
        ? { address: request.address }
        : {}),
    });
    this.#commit([...others, peer]);
    this.#options.onChange?.({ kind: "pinned", peer });
    return { ok: true, peer };
  }

  /** Stop trusting `nodeId`. The record stays, with `revoked_at`. Revoking twice changes nothing. */
  revoke(nodeId: string): RevokeResult {
    const found = this.#records.find((r) => r.node_id === nodeId);
    if (found === undefined)
      return { ok: false, code: "unknown_peer", message: `no paired node has id ${nodeId}` };
    if (found.revoked_at !== undefined) return { ok: true, peer: found, alreadyRevoked: true };
    const peer: PinnedPeer = Object.freeze({
      ...found,
      revoked_at: new Date(this.#options.clock.now().wallMs).toISOString(),
    });
    this.#commit(this.#records.map((r) => (r === found ? peer : r)));
    this.#options.onChange?.({ kind: "revoked", peer });
    return { ok: true, peer, alreadyRevoked: false };
  }

  /**
   * Record that the active peer `nodeId` is now reached at `address`. Only for an address where an
   * mTLS call presenting the pinned certificate `fingerprint` just succeeded: if the record's pin
   * changed (re-paired) or it was revoked meanwhile, nothing is written.
   */
  relocate(nodeId: string, address: string, fingerprint: string): RelocateResult {
    if (!isPeerAddress(address))
      return { ok: false, code: "invalid_address", message: `${address} is not a HOST:PORT address` };
    const found = this.#records.find((r) => r.node_id === nodeId && r.revoked_at === undefined);
    if (found === undefined)
      return { ok: false, code: "unknown_peer", message: `no active paired node has id ${nodeId}` };
    if (found.fingerprint !== fingerprint)
      return {
        ok: false,
        code: "certificate_changed",
        message: `node ${nodeId} was paired again with another certificate meanwhile`,
      };
    if (found.address === address) return { ok: true, peer: found, changed: false };
    const peer: PinnedPeer = Object.freeze({ ...found, address });
    this.#commit(this.#records.map((r) => (r === found ? peer : r)));
    this.#options.onChange?.({ kind: "moved", peer, from: found.address });
    return { ok: true, peer, changed: true };
  }

  /** Whether a certificate with this fingerprint is pinned and not revoked. */
  isPinned(fingerprint: string): boolean {
    return this.findActive(fingerprint) !== undefined;
  }

  findActive(fingerprint: string): PinnedPeer | undefined {
    return this.#records.find((r) => r.fingerprint === fingerprint && r.revoked_at === undefined);
  }

  active(): readonly PinnedPeer[] {
    // Kept until the records change: forwarding asks on every request.
    if (this.#active?.of !== this.#records)
      this.#active = {
        of: this.#records,
        peers: Object.freeze(this.#records.filter((r) => r.revoked_at === undefined)),
      };
    return this.#active.peers;
  }

  /** Every record, revoked ones included, in the order they were pinned. */
  list(): readonly PinnedPeer[] {
    return this.#records;
  }

  /** Write first, then take the new state: a failed write leaves memory and disk as they were. */
  #commit(records: readonly PinnedPeer[]): void {
    const revoked = records.filter((r) => r.revoked_at !== undefined);
    const dropped = new Set(
      [...revoked]
        .sort((a, b) => (a.revoked_at ?? "").localeCompare(b.revoked_at ?? ""))
        .slice(0, Math.max(0, revoked.length - MAX_REVOKED_PEERS_KEPT)),
    );
    const kept = Object.freeze(records.filter((r) => !dropped.has(r)));
    writeFileAtomically(
      this.path,
      `${JSON.stringify({ version: PEERS_FILE_VERSION, peers: kept }, null, 2)}\n`,
    );
    this.#records = kept;
  }
}

/** A node name as peers.json (and discovery) accepts it. */
export function isPeerName(name: string): boolean {
  return name.length <= PEER_NAME_MAX_CHARS && PEER_NAME.test(name);
}

/** `host:port`, `[v6]:port`: a loose check (the address is only ever dialled, under the pin). */
export function isPeerAddress(address: string): boolean {
  const match = /^(.{1,255}):([0-9]{1,5})$/.exec(address);
  const port = Number(match?.[2]);
  return match !== null && port >= 1 && port <= 65_535 && !/[\s/@?#]/.test(match[1] ?? "");
}

function readPeersFile(path: string): readonly PinnedPeer[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") return Object.freeze([]);
    throw cause;
  }
  const mode = statSync(path).mode;
  if (process.platform !== "win32" && (mode & 0o022) !== 0)
    throw new ClusterError(
      "peers_file_exposed",
      `${path} is writable by group or others (mode ${(mode & 0o777).toString(8).padStart(4, "0")}); ` +
        `whoever can write it decides which nodes are trusted: check its content, then run \`chmod 600 ${path}\``,
      path,
    );
  const invalid = (why: string): ClusterError =>
    new ClusterError("peers_file_invalid", `${path}: ${why}; restore it from a backup or pair again`, path);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid("not valid JSON");
  }
  if (!isObject(parsed) || parsed["version"] !== PEERS_FILE_VERSION || !Array.isArray(parsed["peers"]))
    throw invalid(`expected {"version": ${PEERS_FILE_VERSION}, "peers": [...]}`);
  const records: PinnedPeer[] = [];
  const seen = new Set<string>();
  for (const [index, raw] of (parsed["peers"] as unknown[]).entries()) {
    const record = readRecord(raw);
    if (typeof record === "string") throw invalid(`peers[${index}]: ${record}`);
    if (seen.has(record.node_id)) throw invalid(`peers[${index}]: node ${record.node_id} is recorded twice`);
    seen.add(record.node_id);
    records.push(record);
  }
  return Object.freeze(records);
}

/** A record as stored, checked against its own certificate; a string says what is wrong. */
function readRecord(raw: unknown): PinnedPeer | string {
  if (!isObject(raw)) return "not an object";
  const { node_id, name, cert_pem, fingerprint, paired_at, revoked_at, address } = raw;
  if (typeof node_id !== "string" || typeof fingerprint !== "string" || typeof cert_pem !== "string")
    return "node_id, fingerprint and cert_pem must be strings";
  if (typeof name !== "string" || !isPeerName(name)) return "name is not a valid node name";
  if (!isIsoTime(paired_at)) return "paired_at is not an ISO 8601 time";
  if (revoked_at !== undefined && !isIsoTime(revoked_at)) return "revoked_at is not an ISO 8601 time";
  if (address !== undefined && (typeof address !== "string" || !isPeerAddress(address)))
    return "address is not a HOST:PORT address";
  const read = readNodeCertificate(cert_pem);
  if (!read.ok) return `cert_pem is not a node certificate: ${read.reason}`;
  if (read.certificate.fingerprint !== fingerprint) return "fingerprint does not match cert_pem";
  if (read.certificate.nodeId !== node_id) return "node_id does not match cert_pem";
  const base = {
    node_id,
    name,
    cert_pem: read.certificate.pem,
    fingerprint,
    paired_at,
    ...(address === undefined ? {} : { address }),
  };
  return Object.freeze(revoked_at === undefined ? base : { ...base, revoked_at });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isIsoTime(value: unknown): value is string {
  return typeof value === "string" && /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value));
}
