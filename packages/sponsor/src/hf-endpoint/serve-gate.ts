/**
 * Whether a managed endpoint's live spell serves: Hugging Face saying `running` is not enough, its
 * engine must list the model on `/v1/models` (an image that is no OpenAI server never does). Keeps
 * the spell seen serving (later requests pay no look), why the last look failed, and how long a spell
 * has billed without serving — from its start, or from this process's if later.
 * Must not know: the controller, the ledger, HTTP (the look is `servesModel`).
 */

import type { DeploymentRecord } from "@pair/provision";
import type { HuggingFaceEndpointNode } from "../config/index.js";
import type { PairError } from "@pair/dialects";
import type { ServeCheck } from "../core/models-probe.js";
import { credentialRejectedReason } from "../core/node-credentials.js";

/** What a request may do with the live spell: use its URL, fail with this error, or (undefined) wait. */
export type Servable = { readonly url: string } | { readonly error: PairError } | undefined;

export interface ServeGateOptions {
  readonly config: HuggingFaceEndpointNode;
  /** Whether the engine at a data-plane URL lists one of `models` on `/v1/models` (never throws). */
  readonly servesModel: (url: string, models: readonly string[]) => Promise<ServeCheck>;
  /** When this process began watching the node (wall ms). */
  readonly openedAtMs: number;
  readonly error: (code: PairError["code"], message: string) => PairError;
}

export class ServeGate {
  readonly #o: ServeGateOptions;
  #servingSpell: string | undefined;
  #notServing: string | undefined;
  #check: Promise<ServeCheck> | undefined;

  constructor(options: ServeGateOptions) {
    this.#o = options;
  }

  /** Why the live spell does not serve yet (the last `/v1/models` look). */
  get notServing(): string | undefined {
    return this.#notServing;
  }

  /**
   * HF says it runs and its engine was seen listing the model, or answers 503 there (loading, or
   * scaled to zero: the request itself wakes it, and a 503 to it is waited out within its budget). A
   * scaled-to-zero endpoint passes; a refused token ends the wait at once.
   */
  async servable(live: DeploymentRecord | undefined): Promise<Servable> {
    const observed = live?.observed;
    if (live === undefined || observed?.address === undefined || observed.status === "paused")
      return undefined;
    const address = observed.address;
    if (observed.status === "scaledToZero" || this.#servingSpell === live.id) return { url: address };
    if (observed.status !== "running") return undefined;
    const models = [...new Set([observed.servedModel, ...this.#o.config.models])].filter(
      (m): m is string => m !== undefined,
    );
    const check = await (this.#check ??= this.#o.servesModel(address, models).finally(() => {
      this.#check = undefined;
    }));
    if (check.serves) {
      this.#servingSpell = live.id;
      this.#notServing = undefined;
      return { url: address };
    }
    this.#notServing = check.why;
    if (check.refused !== undefined)
      return {
        error: this.#o.error("credential_rejected", credentialRejectedReason(this.#o.config, check.refused)),
      };
    return check.warming === true ? { url: address } : undefined;
  }

  /** How long the live spell has billed without serving; undefined when it serves or does not bill. */
  async unservedMs(live: DeploymentRecord, nowMs: number): Promise<number | undefined> {
    const status = live.observed?.status;
    if (live.phase !== "Active" || status === "paused" || status === "scaledToZero") return undefined;
    if (status === "running") await this.servable(live);
    if (this.#servingSpell === live.id) return undefined;
    return nowMs - Math.max(live.intent?.sentAtMs ?? live.declaredAtMs, this.#o.openedAtMs);
  }
}
