/**
 * What every managed rented node is (a Hugging Face endpoint, a Hugging Face Job, a Runpod pod),
 * and the one registry of them the sponsor routes through: `pair rented pause NAME` is
 * `nodes.get(NAME).pause()`, whatever provider runs it. Each provider's manager opens its nodes and
 * puts them here; a configured node it could not open (a credential missing) shows with the reason.
 * Must not know: which provider runs a node, HTTP, the CLI, timers.
 */

import type { RoutingUse } from "../config/index.js";
import type { PairError } from "@pair/dialects";
import type { CreatedInfo, ManagedAction, ManagedView } from "./managed-endpoint-view.js";
import type { CredentialRef } from "../config/index.js";
import type { Redacted } from "@pair/cluster";

/** Reads a credential; throws an error with a `code` (`credential_unavailable`) when the store fails. */
export interface CredentialReader {
  get(ref: CredentialRef): Promise<Redacted<string> | undefined>;
}

export type RentedState =
  | "unknown"
  | "running"
  | "warming"
  | "starting"
  | "scaled_to_zero"
  | "paused"
  | "failed"
  | "public_endpoint_refused"
  | "unreachable"
  | "credential_rejected"
  | "credential_unavailable"
  | "unsupported";

export interface ManagedStatus {
  readonly state: RentedState;
  readonly models: readonly string[];
  readonly gpu: string | undefined;
  readonly lastError: string | undefined;
  /** The provider's own state word and message, when the manager knows them (a job's stage). */
  readonly providerState?: string | undefined;
  readonly providerMessage?: string | undefined;
}

/** A managed node's answer to a request about to be sent: its data-plane base URL (without /v1). */
export type Prepared =
  { readonly ok: true; readonly url: string } | { readonly ok: false; readonly error: PairError };

/** The routing use a node puts in force (a job node: `never` outside its window), with why. */
export interface NodeRoutingUse {
  readonly use: RoutingUse;
  readonly why?: string;
}

/** The contract every managed rented node keeps (the contract suite in test/rented runs it on all three). */
export interface ManagedRentedNode {
  readonly name: string;
  /** Make it ready for a request (wake or start it within `signal`, the cold-start budget). */
  prepare(signal: AbortSignal): Promise<Prepared>;
  /** `pair rented pause`: stop what bills and start nothing until `resume`. */
  pause(): Promise<ManagedAction>;
  /** `pair rented resume`: it runs on demand again (refused while over budget). */
  resume(): ManagedAction | Promise<ManagedAction>;
  /** `pair rented delete`: an endpoint is deleted; a job or pod, which PAIR starts per use, is stopped. */
  delete(): Promise<ManagedAction>;
  /** Paused, yet a request may wake it. */
  wakeable(): boolean;
  /** Refused for money (`budget_exceeded`): the view and the router ask this one function. */
  budgetRefusal(): PairError | undefined;
  /** Its state when the manager knows it without a probe (a job, a pod); undefined: probe it. */
  status(): ManagedStatus | undefined;
  /** The node detail's managed fields (computed; reading it changes nothing). */
  view(): ManagedView;
  /** The hourly price the ledger charges, in micro-dollars; undefined until known. */
  priceMicroUsdPerHour(): number | undefined;
  /** Headers a request to it carries instead of its `credential` (a pod's vLLM key, a job's token). */
  headers(): Readonly<Record<string, string>> | undefined;
  /** Set for nodes `pair rented create` made. */
  created(): CreatedInfo | null;
  /** The routing use it puts in force; undefined: the configured one holds. */
  routingUse(): NodeRoutingUse | undefined;
  /** One pass (reconcile, budget, idle); never throws. */
  tick(): Promise<void>;
  /** Sponsor exit, bounded by `exit_timeout_s`: the obligations still open. */
  close(): Promise<number>;
}

export type ManagedActionName = "pause" | "resume" | "delete";

/** Every managed node of this sponsor, by name, and how the configured ones that could not open show. */
export class ManagedNodes {
  readonly #nodes = new Map<string, ManagedRentedNode>();
  readonly #unopened = new Map<string, ManagedStatus>();

  add(node: ManagedRentedNode): void {
    this.#nodes.set(node.name, node);
    this.#unopened.delete(node.name);
  }

  /** A configured node its manager could not open: shown with this status (undefined: probed as unmanaged). */
  unopened(name: string, status: ManagedStatus | undefined): void {
    this.#nodes.delete(name);
    if (status === undefined) this.#unopened.delete(name);
    else this.#unopened.set(name, status);
  }

  delete(name: string): void {
    this.#nodes.delete(name);
    this.#unopened.delete(name);
  }

  get(name: string): ManagedRentedNode | undefined {
    return this.#nodes.get(name);
  }

  /** What routing and the probe know of it without a probe: the node's own status, or why it is not open. */
  status(name: string): ManagedStatus | undefined {
    const node = this.#nodes.get(name);
    return node === undefined ? this.#unopened.get(name) : node.status();
  }

  /** `pair rented pause|resume|delete NAME` on a node of the registry. */
  static act(node: ManagedRentedNode, action: ManagedActionName): ManagedAction | Promise<ManagedAction> {
    switch (action) {
      case "pause":
        return node.pause();
      case "resume":
        return node.resume();
      case "delete":
        return node.delete();
    }
  }
}
