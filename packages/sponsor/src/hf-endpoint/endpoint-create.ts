/**
 * What a managed Hugging Face endpoint declares and what it costs: its price (the endpoint's hardware,
 * or the one PAIR asked for, from the namespace's hardware list) and the reservation at it; the two
 * steps of `pair rented create` (the declaration under a ledger authorization, then the create); and
 * an adoption (a resume and a wake are one): the endpoint that exists, found by name and checked, is
 * declared as a resume of its exact key under a ledger authorization, then resumed by the contract.
 * Must not know: the node's routing, its idle and budget passes, timers.
 */

import { HF_ENDPOINT_PROVIDER, vllmImage, type EndpointsTransport } from "@pair/huggingface";
import type { Clock, DeploymentRecord, DeploymentSpec, HostingState } from "@pair/provision";
import type { HuggingFaceEndpointNode } from "../config/index.js";
import type { PairError } from "@pair/dialects";
import { findEndpoint } from "./adopting-provider.js";
import { hardwareOf, offerFor } from "./endpoint-hardware.js";
import {
  describeBudget,
  USD,
  type CreatedInfo,
  type ManagedAction,
  type NewEndpointSpec,
} from "../core/managed-endpoint-view.js";
import { refusalCode } from "../core/managed-ledger.js";
import type { ManagedNodeCore } from "../core/managed-node-core.js";

/** The endpoint's price and its reservation in the ledger. */
export class EndpointPrice {
  readonly #core: ManagedNodeCore;
  readonly #transport: EndpointsTransport;
  readonly #config: HuggingFaceEndpointNode;
  readonly #log: (line: string) => void;
  #microUsdPerHour: number | undefined;

  constructor(
    core: ManagedNodeCore,
    transport: EndpointsTransport,
    config: HuggingFaceEndpointNode,
    log: (line: string) => void,
  ) {
    this.#core = core;
    this.#transport = transport;
    this.#config = config;
    this.#log = log;
  }

  /** The hourly price the ledger charges (micro-USD); undefined until the provider was asked. */
  get microUsdPerHour(): number | undefined {
    return this.#microUsdPerHour;
  }

  /**
   * Price and reservation; false (with `last_error`) when the provider could not be asked yet. The
   * hardware is the endpoint's, or — when it does not exist (a create PAIR declared may never have
   * happened) — the one PAIR asked for, from SQLite: reconciliation must still run to settle that create.
   */
  async ensure(): Promise<boolean> {
    if (this.#microUsdPerHour !== undefined) return true;
    const { namespace } = this.#config.endpoint;
    try {
      const shape = await hardwareOf(this.#transport, this.#config.endpoint, this.#core.controller.state);
      const offer = offerFor(await this.#transport.listProviderCompute(namespace), shape);
      if (offer === undefined) {
        this.#core.lastError =
          `no price for ${shape.instanceType ?? "?"} ${shape.instanceSize ?? "?"} in ` +
          `${namespace}'s hardware list: PAIR cannot budget it, so it does not manage it`;
        return false;
      }
      return this.reserve(Math.round(offer.pricePerHourUsd * USD));
    } catch (cause) {
      this.#core.lastError = `Endpoints API: ${(cause as Error).message}`;
      return false;
    }
  }

  /** Open (or bring in step) the node's ledger reservation at this price. */
  reserve(microUsdPerHour: number): boolean {
    if (!this.#core.reserve(microUsdPerHour)) return false;
    this.#microUsdPerHour = microUsdPerHour;
    this.#core.lastError = undefined;
    return true;
  }

  /**
   * A catalog deploy picks its hardware itself: the reservation moves from the offer it was
   * authorized at to the price of what the endpoint runs on.
   */
  async reprice(): Promise<void> {
    const authorized = this.#microUsdPerHour;
    this.#microUsdPerHour = undefined;
    if (!(await this.ensure())) {
      this.#microUsdPerHour = authorized;
      return;
    }
    if (this.#microUsdPerHour !== authorized)
      this.#log(
        `rented node ${this.#core.name}: the catalog's recipe runs at $${(this.#microUsdPerHour ?? 0) / USD}/h ` +
          `(the create was checked at $${(authorized ?? 0) / USD}/h); the budget counts the real price`,
      );
  }
}

/** What the create steps read of their endpoint node. */
export interface CreateContext {
  readonly core: ManagedNodeCore;
  readonly config: HuggingFaceEndpointNode;
  readonly transport: EndpointsTransport;
  readonly price: EndpointPrice;
  readonly clock: Clock;
  readonly log: (line: string) => void;
  readonly live: () => DeploymentRecord | undefined;
  /** The detail of the last create answer that was not a creation (HF's message, or why it was lost). */
  readonly createDetail: () => string | undefined;
  /** Hugging Face's code for the last real create it refused. */
  readonly refusedCode: () => string | undefined;
}

/**
 * `pair rented create`, first step: the reservation at the offer's price, a ComputeAuthorization from
 * the ledger (refused: `budget_exceeded`), and the declaration (durable in SQLite). Nothing is sent to
 * Hugging Face yet. Returns the deployment id `create` takes.
 */
export function declareCreate(
  c: CreateContext,
  spec: NewEndpointSpec,
): { ok: true; id: string } | { ok: false; error: PairError } {
  const { core } = c;
  if (c.live() !== undefined)
    return { ok: false, error: core.error("rented_node_ineligible", "it already has a live deployment") };
  if (!c.price.reserve(Math.round(spec.priceUsdPerHour * USD)))
    return { ok: false, error: core.error("rented_node_ineligible", core.lastError ?? "no reservation") };
  const authorization = core.authorize();
  if (!authorization.ok) {
    const code = refusalCode(authorization.error.code);
    return {
      ok: false,
      error: core.error(
        code,
        code === "budget_exceeded"
          ? "the ledger gave no compute authorization: one billed minute does not fit in its budget " +
              `(${describeBudget(c.config.budget)}); raise --usd-per-day / --usd-per-month`
          : `the ledger gave no compute authorization: ${authorization.error.code}`,
      ),
    };
  }
  const declared = core.controller.declare(createSpec(c.config, spec), authorization.value);
  if (!declared.ok)
    return {
      ok: false,
      error: core.error("rented_node_ineligible", `declare refused: ${declared.error.code}`),
    };
  return { ok: true, id: declared.value };
}

/**
 * `pair rented create`, second step: record the intent (the stop obligation opens) and create the
 * endpoint. A refusal carries Hugging Face's message; a lost answer is Uncertain — never sent again,
 * reconciliation finds the endpoint by its request id.
 */
export async function createDeclared(c: CreateContext, id: string): Promise<ManagedAction> {
  const { core } = c;
  core.lastActiveMs = c.clock.now().wallMs;
  const started = await core.controller.start(id);
  const record = core.controller.state.deployments[id];
  if (!started.ok) {
    core.lastError = `create refused: ${started.error.code}`;
    return { ok: false, error: core.error("rented_node_ineligible", core.lastError) };
  }
  if (record?.key !== undefined) {
    c.log(`rented node ${core.name}: created endpoint (created ${record.key.incarnation})`);
    if (record.spec?.settings?.["catalog"] === "deploy") await c.price.reprice();
    return { ok: true };
  }
  const detail = c.createDetail() ?? "no answer";
  if (record?.intent?.answer !== "refused") {
    core.lastError = `the create's answer was lost (${detail}); reconciliation finds out whether it exists`;
    c.log(`rented node ${core.name}: ${core.lastError}`);
    return { ok: true };
  }
  // Refused: still Uncertain for the contract (reconciliation closes it once the listing shows nothing).
  core.lastError = `Hugging Face refused the create: ${detail}`;
  const code = c.refusedCode() === "public_endpoint_refused" ? "public_endpoint_refused" : "upstream_error";
  return { ok: false, error: core.error(code, core.lastError) };
}

/** Declare a spell under a ledger authorization and bring the endpoint into use (resume if paused). */
export async function adoptEndpoint(c: CreateContext): Promise<ManagedAction> {
  const { core } = c;
  const { namespace, name } = c.config.endpoint;
  const authorization = core.authorize();
  if (!authorization.ok)
    return {
      ok: false,
      error: core.error(
        refusalCode(authorization.error.code),
        `the ledger refused: ${authorization.error.code}`,
      ),
    };
  const found = await findEndpoint(c.transport, namespace, name, lastIncarnation(core.controller.state));
  if (found.kind !== "found") {
    core.lastError = `adopting ${namespace}/${name}: ${found.kind === "lost" ? found.cause : found.message}`;
    return { ok: false, error: core.error("rented_node_ineligible", core.lastError) };
  }
  const declared = core.controller.declareResume(found.key, authorization.value);
  if (!declared.ok)
    return {
      ok: false,
      error: core.error("rented_node_ineligible", `declare refused: ${declared.error.code}`),
    };
  const started = await core.controller.resume(declared.value);
  const record = core.controller.state.deployments[declared.value];
  if (!started.ok || record?.intent?.answer !== "resumed") {
    const why = record?.intent?.answer ?? (started.ok ? "no answer" : started.error.code);
    core.lastError = `adopting ${namespace}/${name}: ${why}`;
    return { ok: false, error: core.error("rented_node_ineligible", core.lastError) };
  }
  core.lastError = undefined;
  c.log(`rented node ${core.name}: managing ${namespace}/${name} (created ${found.key.incarnation})`);
  return { ok: true };
}

/** The spec of a real create (`pair rented create`): the model and the chosen hardware offer. */
function createSpec(config: HuggingFaceEndpointNode, spec: NewEndpointSpec): DeploymentSpec {
  const { namespace, name } = config.endpoint;
  return {
    provider: HF_ENDPOINT_PROVIDER,
    account: namespace,
    name,
    model: spec.repository,
    hardware: spec.instanceType,
    region: spec.region,
    settings: {
      vendor: spec.vendor,
      accelerator: spec.accelerator,
      instanceSize: spec.instanceSize,
      accessType: spec.accessType,
      scaleToZeroTimeoutMin: spec.scaleToZeroTimeoutMin,
      ...(spec.imageUrl === undefined ? {} : { imageJson: JSON.stringify(vllmImage(spec.imageUrl)) }),
      ...(spec.fromCatalog === undefined ? {} : { catalog: "deploy" }),
    },
  };
}

/** The incarnation of the last spell recorded (durable), if any. */
export function lastIncarnation(state: HostingState): string | undefined {
  const recorded = Object.values(state.deployments)
    .filter((d) => d.key !== undefined && (d.origin === "create" || d.origin === "resume"))
    .sort((a, b) => b.declaredAtMs - a.declaredAtMs);
  return recorded[0]?.key?.incarnation;
}

/** When PAIR created this node's endpoint (the first create declared, from SQLite), or null. */
export function createdInfo(state: HostingState, nowMs: number): CreatedInfo | null {
  const first = Object.values(state.deployments)
    .filter((d) => d.origin === "create")
    .sort((a, b) => a.declaredAtMs - b.declaredAtMs)[0];
  if (first === undefined) return null;
  const elapsedMs = Math.max(0, nowMs - first.declaredAtMs);
  return { started_at: new Date(first.declaredAtMs).toISOString(), elapsed_s: Math.floor(elapsedMs / 1000) };
}
