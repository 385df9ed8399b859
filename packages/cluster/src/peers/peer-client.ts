/**
 * Talking to one pinned peer: an undici `Agent` that presents this node's certificate, trusts only
 * that peer's pinned certificate (`ca: [pin]`) and, in a real `checkServerIdentity`, accepts the
 * server only if its certificate's fingerprint is the pin (host names mean nothing for pinned
 * self-signed certificates). TLS 1.3 only; one TLS context per peer, shared by its connections. TLS session resumption is off: Node skips
 * `checkServerIdentity` on a resumed session, and the pin must be checked on every connection.
 * There is no option to loosen any of this.
 * Must not know: routes, what is asked of the peer, pairing, discovery.
 */

import { createSecureContext, type PeerCertificate, type SecureContext } from "node:tls";
import { Agent } from "undici";
import { checkLimit, ClusterError } from "./cluster-error.js";
import type { NodeIdentity } from "./identity.js";
import { fingerprintOfDer, parseSinglePemCertificate } from "./node-certificate.js";
import type { PinnedPeer } from "./pinned-peers.js";

export interface PeerAgentLimits {
  /** Time to open a connection, TLS handshake included. */
  readonly connectTimeoutMs: number;
  /** Idle time before a pooled connection is closed (below the server's keep-alive timeout). */
  readonly keepAliveTimeoutMs: number;
  /** Time to wait for a response's headers. */
  readonly headersTimeoutMs: number;
  /** Longest silence while a response body streams (0: none, for long generations). */
  readonly bodyTimeoutMs: number;
  /** Connections open to the peer at once. */
  readonly maxConnections: number;
}

export const DEFAULT_PEER_AGENT_LIMITS: PeerAgentLimits = Object.freeze({
  connectTimeoutMs: 10_000,
  keepAliveTimeoutMs: 30_000,
  headersTimeoutMs: 300_000,
  bodyTimeoutMs: 300_000,
  maxConnections: 64,
});

export interface PeerAgentOptions {
  readonly identity: NodeIdentity;
  readonly peer: Pick<PinnedPeer, "node_id" | "cert_pem" | "fingerprint" | "revoked_at">;
  readonly limits?: Partial<PeerAgentLimits>;
}

export function peerAgentLimits(overrides: Partial<PeerAgentLimits> = {}): PeerAgentLimits {
  const limits = { ...DEFAULT_PEER_AGENT_LIMITS, ...overrides };
  const dayMs = 86_400_000;
  checkLimit("connectTimeoutMs", limits.connectTimeoutMs, 100, 600_000);
  checkLimit("keepAliveTimeoutMs", limits.keepAliveTimeoutMs, 100, 3_600_000);
  checkLimit("headersTimeoutMs", limits.headersTimeoutMs, 100, dayMs);
  checkLimit("bodyTimeoutMs", limits.bodyTimeoutMs, 0, dayMs);
  checkLimit("maxConnections", limits.maxConnections, 1, 4_096);
  return Object.freeze(limits);
}

/**
 * A `checkServerIdentity` that accepts exactly the certificate with `fingerprint` (SHA-256 of the
 * DER, lowercase hex), whatever the host name. Node calls it after the chain verified.
 */
export function pinnedServerIdentity(
  fingerprint: string,
): (host: string, cert: PeerCertificate) => Error | undefined {
  return (_host, cert) => {
    const raw = (cert as Partial<PeerCertificate>).raw;
    const presented = raw instanceof Uint8Array && raw.length > 0 ? fingerprintOfDer(raw) : undefined;
    if (presented === fingerprint) return undefined;
    return Object.assign(
      new Error(
        `the peer's certificate is not the pinned one (expected ${fingerprint}, got ${presented ?? "none"})`,
      ),
      { code: "ERR_PAIR_PEER_NOT_PINNED", expected: fingerprint, presented },
    );
  };
}

/**
 * The TLS context for every connection to one pinned peer: trusts only its pinned certificate,
 * presents this node's, TLS 1.3 only. Built once per peer: given as options instead, the pin,
 * certificate and key were parsed again for each new connection (about 1 ms of CPU each).
 * @throws ClusterError `peer_not_trusted` for a revoked peer or a cert_pem that is not its pin
 */
export function peerSecureContext(
  identity: NodeIdentity,
  peer: Pick<PinnedPeer, "node_id" | "cert_pem" | "fingerprint" | "revoked_at">,
): SecureContext {
  if (peer.revoked_at !== undefined)
    throw new ClusterError("peer_not_trusted", `node ${peer.node_id} was revoked at ${peer.revoked_at}`);
  const parsed = parseSinglePemCertificate(peer.cert_pem);
  if (!parsed.ok) throw new ClusterError("peer_not_trusted", `node ${peer.node_id}: ${parsed.reason}`);
  if (fingerprintOfDer(parsed.x509.raw) !== peer.fingerprint)
    throw new ClusterError(
      "peer_not_trusted",
      `node ${peer.node_id}: cert_pem does not match its fingerprint`,
    );
  return createSecureContext({
    ca: [parsed.x509.toString()],
    cert: identity.certPem,
    key: identity.privateKeyPem.reveal(),
    minVersion: "TLSv1.3",
  });
}

/** An Agent for one pinned peer. The caller closes it (`agent.close()`) when the peer goes. */
export function createPeerAgent(options: PeerAgentOptions): Agent {
  const { identity, peer } = options;
  const limits = peerAgentLimits(options.limits);
  const secureContext = peerSecureContext(identity, peer);
  return new Agent({
    connect: {
      secureContext,
      checkServerIdentity: pinnedServerIdentity(peer.fingerprint),
      maxCachedSessions: 0,
      timeout: limits.connectTimeoutMs,
    },
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    headersTimeout: limits.headersTimeoutMs,
    bodyTimeout: limits.bodyTimeoutMs,
    connections: limits.maxConnections,
  });
}
