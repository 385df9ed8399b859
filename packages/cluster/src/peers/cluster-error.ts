/**
 * The refusals of the cluster's trust layer that stop a start or a call: one `ClusterError` with a
 * stable `code`, the file it concerns (when one), and whether retrying can help (never: a person has
 * to fix a file or a call). Messages name files and modes, never key material.
 * Expected refusals during operation (pinning an unfit certificate, revoking an unknown node, an
 * address that does not answer `pair join`) are result unions, not throws; the codes they report
 * to the admin API are listed here too, so there is one catalogue.
 * Must not know: TLS, sockets, how the node reports errors.
 */

import { CodedError } from "../errors/coded-error.js";

/** Stable codes. Scripts and tests match on these; add freely, never rename. */
export const CLUSTER_ERROR_CODES = [
  /** `identity.key` is readable or writable by group or others. */
  "identity_key_exposed",
  /** One of `identity.key` / `identity.crt` exists without the other. */
  "identity_incomplete",
  /** A file of the identity cannot be read as what it should be. */
  "identity_invalid",
  /** `identity.key` and `identity.crt` do not belong together. */
  "identity_mismatch",
  /** `peers.json` cannot be read as a trust store. */
  "peers_file_invalid",
  /** `peers.json` is writable by group or others (writing it grants access). */
  "peers_file_exposed",
  /** A certificate handed to the peer client is not exactly its pin, or the peer is revoked. */
  "peer_not_trusted",
  /** A limit is outside its allowed range. */
  "invalid_limit",
  /** `pair join`: nothing answers on the address given (refused, timed out, no route). */
  "peer_unreachable",
  /** `pair join`: something answers on the address, but not a PAIR node's cluster port. */
  "not_a_pair_node",
  /** `pair unpair`: no paired node has that node id or name (or several share the name). */
  "unknown_peer",
] as const;

export type ClusterErrorCode = (typeof CLUSTER_ERROR_CODES)[number];

export class ClusterError extends CodedError<ClusterErrorCode> {
  override readonly name = "ClusterError";

  constructor(
    code: ClusterErrorCode,
    message: string,
    /** The file concerned, when there is one. */
    readonly file?: string,
    options?: { cause?: unknown },
  ) {
    // Fixing the file or the call helps; retrying the same thing does not.
    super(code, `${code}: ${message}`, { cause: options?.cause, retryable: false });
  }

  toJSON(): { code: ClusterErrorCode; message: string; file?: string } {
    return this.file === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, file: this.file };
  }
}

/** A whole number within [min, max], or a ClusterError naming the limit (units are in the name). */
export function checkLimit(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new ClusterError(
      "invalid_limit",
      `${name} must be a whole number from ${min} to ${max}, got ${value}`,
    );
  return value;
}
