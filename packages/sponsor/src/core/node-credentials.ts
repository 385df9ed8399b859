/**
 * What the managers of on-demand rented nodes (Runpod pods, Hugging Face Jobs) share: reading a node's
 * credential with the reason kept when it fails, and how a node that could not open shows.
 * Must not know: which provider the nodes run on, HTTP, timers.
 */

import type { Redacted } from "@pair/cluster";
import type { CredentialRef, RentedNodeConfig } from "../config/index.js";
import type { CredentialReader, ManagedStatus } from "./managed-node.js";

/**
 * Read `ref` for node `name`; undefined when it is not configured, not stored or the store fails,
 * with the reason (naming `what` and the command to store it) kept in `problems`.
 */
export async function readNodeCredential(
  credentials: CredentialReader,
  problems: Map<string, string>,
  name: string,
  ref: CredentialRef | undefined,
  what: string,
): Promise<Redacted<string> | undefined> {
  if (ref === undefined) {
    problems.set(name, `${what} is not configured`);
    return undefined;
  }
  try {
    const value = await credentials.get(ref);
    if (value === undefined)
      problems.set(
        name,
        `${what} is not in the OS credential store: pair credential set ${ref.service}/${ref.account}`,
      );
    return value;
  } catch (cause) {
    problems.set(name, `${what}: ${(cause as Error).message}`);
    return undefined;
  }
}

/** How a configured node that could not be opened (a credential missing) shows: with the reason kept in `problems`. */
export function credentialUnavailable(
  problems: ReadonlyMap<string, string>,
  name: string,
  models: readonly string[] | undefined,
): ManagedStatus | undefined {
  const problem = problems.get(name);
  if (problem === undefined || models === undefined) return undefined;
  return { state: "credential_unavailable", models, gpu: undefined, lastError: problem };
}

/** Why a node is `credential_rejected`, and what to do: store a valid credential under its reference. */
export function credentialRejectedReason(config: RentedNodeConfig, status: number): string {
  const what = `the provider answered ${status} to its credential`;
  if (config.credential === undefined) return what;
  const { service, account } = config.credential;
  return `${what}; store a valid one with: pair credential set ${service}/${account}`;
}
