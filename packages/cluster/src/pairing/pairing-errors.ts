/**
 * The refusals of PIN pairing, as stable codes. `pairing_failed` stands for a wrong PIN and for a
 * man-in-the-middle alike: the protocol cannot tell them apart and the code does not try to.
 * Codes a responder may report to the initiator travel in a `pair.refused` message.
 * Must not know: sockets, the CLI's wording, logging.
 */

export const PAIRING_ERROR_CODES = [
  "pin_expired",
  "pin_attempts_exhausted",
  "pairing_failed",
  "pairing_busy",
  "invalid_pin",
  "malformed_message",
  "unsupported_version",
] as const;

export type PairingErrorCode = (typeof PAIRING_ERROR_CODES)[number];

/** Codes a `pair.refused` message may carry (`invalid_pin` is about local input, never sent). */
export const REMOTE_ERROR_CODES = [
  "pin_expired",
  "pin_attempts_exhausted",
  "pairing_failed",
  "pairing_busy",
  "malformed_message",
  "unsupported_version",
] as const satisfies readonly PairingErrorCode[];

export type RemoteErrorCode = (typeof REMOTE_ERROR_CODES)[number];

export interface PairingError {
  readonly code: PairingErrorCode;
  /** For people; never contains the PIN or key material. */
  readonly message: string;
  /** Whether trying the same thing again later can help (only `pairing_busy`). */
  readonly retryable: boolean;
  /** True when the other node reported this refusal (`pair.refused`), false when found here. */
  readonly remote: boolean;
}

/** What each code means, in one line (docs/security.md repeats this table). */
export const PAIRING_ERROR_MEANINGS: Readonly<Record<PairingErrorCode, string>> = {
  pin_expired: "no usable PIN: it expired, was used, was replaced, or none was shown",
  pin_attempts_exhausted: "too many wrong attempts: the PIN is burnt; show a new one",
  pairing_failed: "wrong PIN, or someone in between changed what the nodes saw; the two look the same",
  pairing_busy: "another pairing with this PIN is in flight; try again shortly",
  invalid_pin: "the PIN typed is not 6 digits",
  malformed_message: "a pairing message could not be read",
  unsupported_version: "the other node speaks a pairing protocol version this node does not",
};

export function pairingError(code: PairingErrorCode, message: string, remote = false): PairingError {
  return { code, message, retryable: code === "pairing_busy", remote };
}

export function isRemoteErrorCode(value: unknown): value is RemoteErrorCode {
  return typeof value === "string" && (REMOTE_ERROR_CODES as readonly string[]).includes(value);
}
