/**
 * What peers learn of a rented node's problem: one code of a closed set and its fixed text, never the
 * sponsor's own detail (a raw probe error names the endpoint's host, URL or namespace). The sponsor's
 * admin view keeps the detail, scrubbed of secrets. The set is documented in docs/security.md.
 * Must not know: how the node is probed or reached, HTTP.
 */

import type { RentedState } from "./rented-probe.js";

/** Every problem a peer may be told of, with the one text it is told. Add freely, never rename. */
export const RENTED_PROBLEMS = {
  not_probed: "its sponsor has not probed it yet",
  unreachable: "its sponsor cannot reach it",
  tls_failed: "its sponsor could not verify its TLS certificate",
  timeout: "it did not answer its sponsor in time",
  upstream_error: "it answered its sponsor with an error",
  credential_rejected: "the provider refused its sponsor's credential",
  credential_unavailable: "its sponsor cannot read its credential",
  failed: "the provider reports that it failed",
  public_endpoint_refused: "it is public, and its sponsor manages only private endpoints",
  unsupported: "its sponsor cannot manage this kind of node",
  paused: "it is paused and does not wake on request",
} as const;

export type RentedProblem = keyof typeof RENTED_PROBLEMS;

/** How a budget refusal's reason starts, in the sponsor's view and in what its peers are told. */
export const BUDGET_REASON_PREFIX = "budget exceeded: ";

/** The codes a sponsor refuses with for a node's state, and a peer with for the same reason. */
export type RentedRefusalCode =
  | "budget_exceeded"
  | "rented_node_paused"
  | "credential_rejected"
  | "public_endpoint_refused"
  | "rented_node_ineligible";

/**
 * The refusal a peer gives for a sponsored node's published reason: the sponsor's own code for it
 * (rented-nodes.ts `serving`), so a client gets the same status whichever node it asked.
 */
export function refusalCodeOfReason(reason: string | null): RentedRefusalCode {
  if (reason?.startsWith(BUDGET_REASON_PREFIX) === true) return "budget_exceeded";
  const problem = reason?.split(":", 1)[0];
  if (problem === "paused") return "rented_node_paused";
  if (problem === "credential_rejected" || problem === "public_endpoint_refused") return problem;
  return "rented_node_ineligible";
}

/** `code: fixed text`, as a peer's `reason` shows it. */
export function peerReasonText(problem: RentedProblem): string {
  return `${problem}: ${RENTED_PROBLEMS[problem]}`;
}

/** The problem of a node in `state`, its detail (`lastError`) read only to tell which kind of failure. */
export function rentedProblemOf(state: RentedState, detail: string | undefined): RentedProblem {
  switch (state) {
    case "unknown":
      return "not_probed";
    case "credential_rejected":
    case "credential_unavailable":
    case "public_endpoint_refused":
    case "unsupported":
    case "failed":
    case "paused":
      return state;
    case "unreachable":
      return failureKindOf(detail ?? "");
    case "running":
    case "warming":
    case "starting":
    case "scaled_to_zero":
      // Not a problem state: reached only for a reason of another kind, which names none of these.
      return "upstream_error";
  }
}

/** A transport failure's kind, read from its message (undici's and Node's codes and wording). */
export function failureKindOf(detail: string): "unreachable" | "tls_failed" | "timeout" | "upstream_error" {
  if (/CERT|certificate|self[- ]signed|\bTLS\b|\bSSL\b|ERR_TLS|UNABLE_TO_VERIFY/i.test(detail))
    return "tls_failed";
  if (/timeout|timed out|ETIMEDOUT|no first byte/i.test(detail)) return "timeout";
  if (/\bHTTP [45]\d\d\b|answered [45]\d\d\b/.test(detail)) return "upstream_error";
  return "unreachable";
}
