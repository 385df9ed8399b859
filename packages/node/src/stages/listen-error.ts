/**
 * Why a node did not start listening, with a stable code (docs/errors.md, "node start").
 * Must not know: which port or stage it was.
 */

import { CodedError } from "../errors/coded-error.js";

/** Stable codes of a refused start. Scripts and tests match on these; add freely, never rename. */
export const LISTEN_ERROR_CODES = ["port_in_use", "listen_failed", "auth_required"] as const;

export class ListenError extends CodedError<(typeof LISTEN_ERROR_CODES)[number]> {
  override readonly name = "ListenError";
  constructor(code: (typeof LISTEN_ERROR_CODES)[number], message: string, options?: { cause?: unknown }) {
    // A port taken or an address refused stays so until someone frees or changes it.
    super(code, message, { cause: options?.cause, retryable: false });
  }
}
