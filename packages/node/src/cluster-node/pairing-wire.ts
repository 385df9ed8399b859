/**
 * How pairing messages travel on the cluster port: plain HTTP/1.1, `POST /pair/v1/handshake`, one
 * JSON envelope per request and per answer, `{"cert"?: PEM, "cluster_port"?: N, "message": <pairing
 * message>}`. The
 * hellos (`pair.hello`, and `pair.share`, the responder's hello) carry their sender's certificate;
 * the receiver reads it itself — a fit node certificate, its fingerprint, its node id — and hands
 * that fingerprint to the pairing core, which binds both into the key exchange. Nothing here trusts
 * the fingerprint or node id a message claims.
 * Must not know: sockets, the PIN, the key exchange, storage.
 */

import { err, ok, type Result } from "@pair/provision";
import { readNodeCertificate, type NodeCertificate, pairingError, type PairingError } from "@pair/cluster";

export const HANDSHAKE_PATH = "/pair/v1/handshake";
/** Largest envelope accepted either way (a certificate is under 1 KiB, a message under 4 KiB). */
export const MAX_ENVELOPE_BYTES = 16 * 1024;

/** An envelope as read: the pairing message, and the sender's certificate when one came. */
export interface Envelope {
  readonly message: unknown;
  readonly cert: NodeCertificate | undefined;
  /**
   * The initiator's cluster port (its hello only), so the responder can reach it later at the
   * connection's remote IP. Not secret and not bound into the key exchange: every later connection
   * to that address is authenticated by the pinned certificate, so a forged port can only make
   * the peer unreachable, never impersonate it.
   */
  readonly clusterPort?: number;
}

/** The text of an envelope. */
export function envelopeText(message: unknown, certPem?: string, clusterPort?: number): string {
  return JSON.stringify({
    ...(certPem === undefined ? {} : { cert: certPem }),
    ...(clusterPort === undefined ? {} : { cluster_port: clusterPort }),
    message,
  });
}

/**
 * An envelope from its text. A certificate that came must be a fit node certificate, and the node
 * id its message claims (if it claims one) must be the one derived from that certificate.
 */
export function readEnvelope(text: string): Result<Envelope, PairingError> {
  if (text.length > MAX_ENVELOPE_BYTES) return err(malformed(`over ${MAX_ENVELOPE_BYTES} characters`));
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return err(malformed("not JSON"));
  }
  if (!isObject(parsed)) return err(malformed("not a JSON object"));
  for (const key of Object.keys(parsed))
    if (key !== "cert" && key !== "message" && key !== "cluster_port")
      return err(malformed(`${key}: unexpected field`));
  if (!Object.hasOwn(parsed, "message")) return err(malformed("message: missing"));
  const { message, cert, cluster_port: clusterPort } = parsed;
  if (
    clusterPort !== undefined &&
    !(
      typeof clusterPort === "number" &&
      Number.isInteger(clusterPort) &&
      clusterPort >= 1 &&
      clusterPort <= 65_535
    )
  )
    return err(malformed("cluster_port: an integer from 1 to 65535 is required"));
  const port = clusterPort === undefined ? {} : { clusterPort };
  if (cert === undefined) return ok({ message, cert: undefined, ...port });
  if (typeof cert !== "string") return err(malformed("cert: a PEM certificate is required"));
  const read = readNodeCertificate(cert);
  if (!read.ok) return err(malformed(`cert: not a node certificate: ${read.reason}`));
  const claimed = claimedNodeId(message);
  if (claimed !== undefined && claimed !== read.certificate.nodeId)
    return err(
      pairingError("pairing_failed", "pairing failed: the node id claimed is not the certificate's"),
    );
  return ok({ message, cert: read.certificate, ...port });
}

/** The `node.id` a hello or share claims, when it has one of the right type. */
function claimedNodeId(message: unknown): string | undefined {
  if (!isObject(message)) return undefined;
  const node = message["node"];
  if (!isObject(node)) return undefined;
  const id = node["id"];
  return typeof id === "string" ? id : undefined;
}

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function malformed(detail: string): PairingError {
  return pairingError("malformed_message", `malformed pairing envelope: ${detail}`);
}
