/**
 * `pair rented create` and what it needs to ask Hugging Face first (account, catalog, hardware), with
 * the sponsor's token read from the OS credential store by reference. A create goes through the
 * hosting contract: the chosen hardware offer's price opens the node's ledger reservation, the
 * ledger issues a ComputeAuthorization (none: `budget_exceeded`, nothing is sent), the declaration is
 * durable in SQLite and the node's entry in rented-nodes.json (a credential reference only) before
 * the create is sent; the intent opens the stop obligation. The endpoint is private (or
 * authenticated, never public) with HF's scale-to-zero on. A lost answer is Uncertain and left to
 * reconciliation — never sent again. Progress (pending → initializing → running) is the node view's
 * `provider_state`, polled by the caller. `provider: huggingface-job` creates a Jobs node instead
 * (create-job.ts), followed the same way.
 * Must not know: HTTP routing, the CLI, the credential store's platform.
 */

import {
  HuggingFaceApiError,
  type EndpointsTransport,
  type HfAccount,
  type HfComputeOffer,
  type JobsTransport,
} from "@pair/huggingface";
import type { Redacted } from "@pair/cluster";
import {
  formatCredentialRef,
  parseCredentialRef,
  type HuggingFaceEndpointNode,
  type RentedConfigReader,
} from "../config/index.js";
import { createJobNode } from "./create-job.js";
import { gpuName } from "../core/gpu-label.js";
import { createdEntry, readCreateRequest, type CreateRequestBody } from "./create-request.js";
import type { JobNodes } from "../hf-job/job-nodes.js";
import { SYSTEM_TIMERS, type Timers } from "@pair/cluster";
import type { ManagedEndpoints } from "../hf-endpoint/managed-endpoints.js";
import type { CredentialReader, RentedNodes, RentedNodeView } from "../registry/rented-nodes.js";

/** The token `pair credential set hf` stores. */
export const DEFAULT_HF_CREDENTIAL = "os-credential-store:pair/hf";

export type HfAnswer<T> =
  | { readonly ok: true; readonly value: T }
  | {
      readonly ok: false;
      readonly status: number;
      readonly code: string;
      readonly message: string;
      readonly param?: string;
    };

export interface AccountView {
  readonly credential: string;
  readonly signed_in: boolean;
  readonly namespace: string | null;
  readonly account_type: "user" | "org" | null;
  readonly message: string | null;
}

export interface HardwareRow {
  readonly vendor: string;
  readonly region: string;
  readonly accelerator: string;
  readonly instance_type: string;
  readonly instance_size: string;
  readonly gpu: string;
  readonly gpus: number;
  readonly vram_gb: number | null;
  readonly usd_per_hour: number;
  readonly quota_available: number | null;
}

export interface RentedCreatorOptions {
  readonly nodeName: string;
  /** Reads one entry by the config file's rules (the daemon's `readRentedNodeValue`). */
  readonly readConfig: RentedConfigReader;
  readonly credentials: CredentialReader;
  /** An Endpoints API client with this token (verified HTTPS, the configured base URLs). */
  readonly transportFor: (token: Redacted<string>) => EndpointsTransport;
  readonly rented: RentedNodes;
  readonly managed: ManagedEndpoints;
  /** Managed Hugging Face Jobs and a Jobs API client per token (absent: no job creates). */
  readonly jobs?: JobNodes;
  readonly jobsTransportFor?: (token: Redacted<string>) => JobsTransport;
  /** How often a node being created is looked at (probe and managed pass) until it runs or fails (default 1 s). */
  readonly watchMs?: number;
  /** Longest a node being created is watched (default 60 min; the periodic probe goes on after). */
  readonly watchLimitMs?: number;
  readonly timers?: Pick<Timers, "after">;
  /** Something peers see changed (the node's state): tell them. */
  readonly onChange?: () => void;
  readonly log?: (line: string) => void;
}

function fail(status: number, code: string, message: string, param?: string): HfAnswer<never> {
  return { ok: false, status, code, message, ...(param === undefined ? {} : { param }) };
}

/** A Jobs GPU flavor as `GET /pair/v1/rented/job-hardware` lists it. */
export interface JobHardwareRow {
  readonly flavor: string;
  readonly gpu: string;
  readonly gpus: number;
  readonly usd_per_hour: number;
}

export function hardwareRow(o: HfComputeOffer): HardwareRow {
  return {
    vendor: o.vendor,
    region: o.region,
    accelerator: o.accelerator,
    instance_type: o.instanceType,
    instance_size: o.instanceSize,
    gpu: gpuName(o),
    gpus: o.numAccelerators,
    vram_gb: o.gpuMemoryGb ?? null,
    usd_per_hour: o.pricePerHourUsd,
    quota_available: o.quota === undefined ? null : o.quota.maxAccelerators - o.quota.usedAccelerators,
  };
}

export class RentedCreator {
  readonly #o: RentedCreatorOptions;
  #closed = false;

  constructor(options: RentedCreatorOptions) {
    this.#o = options;
  }

  /** Who the stored token belongs to; `signed_in: false` (with what to do) when absent or rejected. */
  async account(credential?: string): Promise<HfAnswer<AccountView>> {
    const ref = credential ?? DEFAULT_HF_CREDENTIAL;
    const answer = await this.#withHf(ref, this.#o.transportFor, (hf) => hf.whoami());
    if (answer.ok) return { ok: true, value: accountView(ref, answer.value) };
    if (answer.code === "credential_unavailable" || answer.code === "credential_rejected")
      return {
        ok: true,
        value: {
          credential: ref,
          signed_in: false,
          namespace: null,
          account_type: null,
          message: answer.message,
        },
      };
    return answer;
  }

  /** Repository ids in Hugging Face's endpoint catalog. */
  async catalog(credential?: string): Promise<HfAnswer<{ repo_id: string }[]>> {
    const answer = await this.#withHf(credential ?? DEFAULT_HF_CREDENTIAL, this.#o.transportFor, (hf) =>
      hf.catalog(),
    );
    return answer.ok ? { ok: true, value: answer.value.map((repo_id) => ({ repo_id })) } : answer;
  }

  /** The hardware the namespace may deploy on (the token's own namespace by default), priced, with quota. */
  async hardware(credential?: string, namespace?: string): Promise<HfAnswer<HardwareRow[]>> {
    const answer = await this.#withHf(
      credential ?? DEFAULT_HF_CREDENTIAL,
      this.#o.transportFor,
      async (hf) => {
        const ns = namespace ?? (await hf.whoami()).name;
        return hf.listProviderCompute(ns);
      },
    );
    return answer.ok ? { ok: true, value: answer.value.map(hardwareRow) } : answer;
  }

  /** Hugging Face Jobs' GPU flavors with their price (what a batch window may rent). */
  async jobHardware(credential?: string): Promise<HfAnswer<JobHardwareRow[]>> {
    const { jobsTransportFor } = this.#o;
    if (jobsTransportFor === undefined)
      return fail(400, "invalid_value", "this node cannot reach Hugging Face Jobs");
    const answer = await this.#withHf(credential ?? DEFAULT_HF_CREDENTIAL, jobsTransportFor, (hf) =>
      hf.hardware(),
    );
    if (!answer.ok) return answer;
    return {
      ok: true,
      value: answer.value
        .filter((f) => f.gpuModel !== null && f.gpuCount > 0)
        .map((f) => ({
          flavor: f.name,
          gpu: f.gpuModel ?? "",
          gpus: f.gpuCount,
          usd_per_hour: Math.round(f.usdPerMinute * 60 * 10_000) / 10_000,
        })),
    };
  }

  /** Create a managed endpoint (see the header); the node view with state `starting`, or why not. */
  async create(body: Record<string, unknown>): Promise<HfAnswer<RentedNodeView>> {
    if (body["provider"] === "huggingface-job") return this.#createJob(body);
    const read = readCreateRequest(body);
    if (!read.ok) return fail(400, read.code, read.message, read.param);
    const request = read.request;
    if (this.#o.rented.names().includes(request.name))
      return fail(
        409,
        "duplicate_name",
        `a rented node named ${request.name} exists already (pair nodes lists them)`,
      );
    const credential = request.credential ?? DEFAULT_HF_CREDENTIAL;
    const looked = await this.#withHf(credential, this.#o.transportFor, async (hf) => {
      const namespace = request.namespace ?? (await hf.whoami()).name;
      const repository =
        "repo" in request.source ? request.source.repo : await inCatalog(hf, request.source.catalog);
      const offers = await hf.listProviderCompute(namespace);
      return { namespace, repository, offers };
    });
    if (!looked.ok) return looked;
    const { namespace, repository, offers } = looked.value;
    if (repository === undefined)
      return fail(
        400,
        "invalid_value",
        `catalog: ${"catalog" in request.source ? request.source.catalog : ""} is not in Hugging Face's endpoint catalog (pair rented catalog lists it)`,
        "catalog",
      );
    const offer = offers.find(
      (o) =>
        o.vendor === request.vendor &&
        o.region === request.region &&
        o.instanceType === request.instanceType &&
        o.instanceSize === request.instanceSize,
    );
    if (offer === undefined)
      return fail(
        400,
        "invalid_value",
        `instance_type: ${request.vendor}/${request.region} ${request.instanceType} ${request.instanceSize} ` +
          `is not offered to ${namespace} (pair rented hardware lists what is)`,
        "instance_type",
      );
    const entry = createdEntry(request, namespace, credential);
    const config = this.#o.readConfig(entry, this.#o.nodeName);
    if (!config.ok)
      return fail(
        400,
        "invalid_value",
        config.problems.map((p) => `${p.path}: ${p.message}`).join("; "),
        config.problems[0]?.path,
      );
    return this.#create(request, config.node as HuggingFaceEndpointNode, entry, repository, offer);
  }

  async #create(
    request: CreateRequestBody,
    config: HuggingFaceEndpointNode,
    entry: Record<string, unknown>,
    repository: string,
    offer: HfComputeOffer,
  ): Promise<HfAnswer<RentedNodeView>> {
    const { managed, rented } = this.#o;
    const node = await managed.add(config);
    if (node === undefined)
      return fail(
        503,
        "credential_unavailable",
        `no Hugging Face token in ${formatCredentialRef(config.credential ?? { service: "pair", account: "hf" })}: pair credential set hf`,
      );
    const declared = node.declareCreate({
      repository,
      vendor: offer.vendor,
      region: offer.region,
      accelerator: offer.accelerator,
      instanceType: offer.instanceType,
      instanceSize: offer.instanceSize,
      accessType: request.access,
      scaleToZeroTimeoutMin: request.scaleToZeroMin,
      priceUsdPerHour: offer.pricePerHourUsd,
      ...(request.image === undefined ? {} : { imageUrl: request.image }),
      ...("catalog" in request.source ? { fromCatalog: true } : {}),
    });
    if (!declared.ok) {
      managed.forget(request.name);
      const status = declared.error.code === "budget_exceeded" ? 429 : 503;
      return fail(status, declared.error.code, declared.error.message);
    }
    // Durable before anything is sent: the declaration (SQLite) and the node (rented-nodes.json).
    const attached = await rented.attach(entry, { probe: false });
    if (!attached.ok) return fail(409, attached.code, attached.message);
    this.#o.log?.(
      `rented node ${request.name}: creating ${config.endpoint.namespace}/${config.endpoint.name} ` +
        `(${repository} on ${offer.instanceType} ${offer.instanceSize}, ${offer.region}, ${request.access})`,
    );
    const created = await node.create(declared.id);
    await node.tick();
    await rented.probe();
    const view = rented.list().find((v) => v.name === request.name);
    if (!created.ok) return fail(502, created.error.code, created.error.message);
    if (view === undefined) return fail(500, "upstream_error", `rented node ${request.name} vanished`);
    this.#watch(request.name, view.state);
    return { ok: true, value: view };
  }

  async #createJob(body: Record<string, unknown>): Promise<HfAnswer<RentedNodeView>> {
    const { jobs, jobsTransportFor } = this.#o;
    if (jobs === undefined || jobsTransportFor === undefined)
      return fail(400, "invalid_value", "provider: this node cannot create Hugging Face Jobs", "provider");
    const created = await createJobNode(
      {
        nodeName: this.#o.nodeName,
        readConfig: this.#o.readConfig,
        rented: this.#o.rented,
        jobs,
        defaultCredential: DEFAULT_HF_CREDENTIAL,
        withJobs: (ref, fn) => this.#withHf(ref, jobsTransportFor, fn),
        ...(this.#o.log === undefined ? {} : { log: this.#o.log }),
      },
      body,
    );
    if (created.ok) this.#watch(created.value.name, created.value.state);
    return created;
  }

  /**
   * Look at a node being created every `watchMs` (a managed pass, then a probe) so its view shows
   * progress, until it runs with its models listed, fails, or the watch limit passes.
   */
  #watch(name: string, lastState: string): void {
    const timers = this.#o.timers ?? SYSTEM_TIMERS;
    const watchMs = this.#o.watchMs ?? 1_000;
    let left = Math.ceil((this.#o.watchLimitMs ?? 60 * 60_000) / watchMs);
    let last = lastState;
    const look = async (): Promise<void> => {
      if (this.#closed) return;
      await (this.#o.managed.node(name) ?? this.#o.jobs?.node(name))?.tick();
      const view = await this.#o.rented.probeNode(name);
      if (view === undefined) return;
      if (view.state !== last) {
        last = view.state;
        this.#o.onChange?.();
      }
      // A job's stage is RUNNING before its port answers: it is done once the node itself runs.
      const running = view.provider === "huggingface-job" ? view.state : view.provider_state;
      const done = (running === "running" && view.models.length > 0) || view.provider_state === "failed";
      left -= 1;
      if (!done && left > 0 && !this.#closed) timers.after(() => void look().catch(() => undefined), watchMs);
    };
    timers.after(() => void look().catch(() => undefined), watchMs);
  }

  /** Stop watching nodes being created (sponsor exit). */
  close(): void {
    this.#closed = true;
  }

  /** Run `fn` with an API client (Endpoints by default) on the referenced token; errors as PAIR codes. */
  async #withHf<T, C extends { close(): Promise<void> } = EndpointsTransport>(
    ref: string,
    clientFor: (token: Redacted<string>) => C,
    fn: (hf: C) => Promise<T>,
  ): Promise<HfAnswer<T>> {
    const parsed = parseCredentialRef(ref);
    if (!parsed.ok) return fail(400, parsed.code, `credential: ${parsed.message}`, "credential");
    let token: Redacted<string> | undefined;
    try {
      token = await this.#o.credentials.get(parsed.ref);
    } catch (cause) {
      return fail(
        503,
        "credential_unavailable",
        `the OS credential store failed: ${(cause as Error).message}`,
      );
    }
    if (token === undefined)
      return fail(
        503,
        "credential_unavailable",
        `no Hugging Face token in ${formatCredentialRef(parsed.ref)}: store one with ` +
          `pair credential set ${parsed.ref.service === "pair" ? parsed.ref.account : `${parsed.ref.service}/${parsed.ref.account}`}`,
      );
    const hf = clientFor(token);
    try {
      return { ok: true, value: await fn(hf) };
    } catch (cause) {
      if (
        cause instanceof HuggingFaceApiError &&
        (cause.kind === "rejected_credential" || cause.kind === "forbidden")
      )
        return fail(
          403,
          "credential_rejected",
          `Hugging Face refused the token in ${formatCredentialRef(parsed.ref)}: ${cause.providerMessage ?? cause.kind}; ` +
            "store a valid one with pair credential set",
        );
      return fail(502, "upstream_error", (cause as Error).message);
    } finally {
      await hf.close();
    }
  }
}

function accountView(credential: string, account: HfAccount): AccountView {
  return {
    credential,
    signed_in: true,
    namespace: account.name,
    account_type: account.type === "user" ? "user" : account.type === "org" ? "org" : null,
    message: null,
  };
}

/** The catalog id as the repository to create from, or undefined when the catalog does not list it. */
async function inCatalog(hf: EndpointsTransport, id: string): Promise<string | undefined> {
  const ids = await hf.catalog();
  return ids.includes(id) ? id : undefined;
}
