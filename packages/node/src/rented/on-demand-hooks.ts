/**
 * What the managers of on-demand rented nodes (Runpod pods, Hugging Face Jobs) share: reading a node's
 * credential with the reason kept when it fails, and the routing hooks over their nodes (a cold node
 * is not paused — a request starts one; a user's pause holds until resume).
 * Must not know: which provider the nodes run on, HTTP, timers.
 */

import type { Redacted } from "@pair/cluster";
import type { CredentialRef, RoutingUse } from "../config/index.js";
import type { PairError } from "@pair/dialects";
import type { CreatedInfo, ManagedAction, ManagedView } from "./managed-endpoint.js";
import type { CredentialReader, ManagedHooks, ManagedStatus } from "./rented-nodes.js";

/** A node as its manager's hooks drive it. */
export interface OnDemandNode {
  budgetRefusal(): PairError | undefined;
  resume(): ManagedAction | Promise<ManagedAction>;
  pause(reason: "user-request"): ManagedAction | Promise<ManagedAction>;
  prepare(signal: AbortSignal): Promise<{ ok: true; url: string } | { ok: false; error: PairError }>;
  view(): ManagedView;
  status(): ManagedStatus;
  headers(): Readonly<Record<string, string>> | undefined;
  /** Set for nodes `pair rented create` made. */
  created?(): CreatedInfo | null;
  /** The routing use the node puts in force (undefined: the configured one). */
  routingUse?(): { readonly use: RoutingUse; readonly why?: string } | undefined;
}

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

/** The routing hooks of a manager's nodes; `unmanaged` shows a configured node that could not open. */
export function onDemandHooks(
  nodes: ReadonlyMap<string, OnDemandNode>,
  problems: ReadonlyMap<string, string>,
  unmanaged: (name: string) => ManagedStatus | undefined = () => undefined,
): ManagedHooks {
  const node = (name: string) => nodes.get(name);
  const notManaged = (name: string): PairError => ({
    code: "rented_node_ineligible",
    message: `rented node ${name} is not managed: ${problems.get(name) ?? "unknown node"}`,
    node: name,
  });
  return {
    has: (name) => nodes.has(name),
    wakeable: () => false,
    budgetRefusal: (name) => node(name)?.budgetRefusal(),
    act: async (name, action): Promise<ManagedAction> => {
      const n = node(name);
      if (n === undefined) return { ok: false, error: notManaged(name) };
      return action === "resume" ? n.resume() : n.pause("user-request");
    },
    prepare: (name, signal) =>
      node(name)?.prepare(signal) ?? Promise.resolve({ ok: false, error: notManaged(name) }),
    view: (name): ManagedView | undefined => node(name)?.view(),
    status: (name): ManagedStatus | undefined => node(name)?.status() ?? unmanaged(name),
    headers: (name) => node(name)?.headers(),
    created: (name) => node(name)?.created?.() ?? null,
    routingUse: (name) => node(name)?.routingUse?.(),
  };
}
