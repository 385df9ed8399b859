/**
 * `HuggingFaceJobsProvider`: Hugging Face Jobs behind the hosting contract's provider port, for
 * batch windows. Create runs `vllm serve` as a Job with a token-protected exposed port, the window as
 * `timeoutSeconds`, secrets as Job secrets and PAIR's marks as labels (+ env copy); a lost or 5xx
 * answer is `lost`, never sent again (`findByRequest` lists by the owner label to resolve it). A job
 * id the caller holds a record of (`recordedNames`, from its store) keeps the recorded name in its key
 * whatever its labels say: a restart finds its jobs by id; labels only find the unrecorded. The
 * listing follows every `Link: rel="next"` page (complete only if all were read). Stop is a cancel of
 * the exact job id (jobs cannot pause: a pause is refused); a cancel answered while the job still
 * shows a billed stage is `unknown`, not `accepted`. Describe may probe the exposed port so a
 * report says `ready` only when vLLM answers.
 * Must not know: the contract's decisions, PAIR's node, where the token is stored.
 */

import type {
  Clock,
  CreateOutcome,
  CreateRequest,
  DescribeOutcome,
  Listing,
  ProviderCapabilities,
  ProviderPort,
  ResourceKey,
  ResourceReport,
  StopMode,
  StopOutcome,
} from "@pair/provision";
import { HuggingFaceApiError, retryAfterOf } from "../errors.js";
import type { RevealableToken } from "../secret-token.js";
import { HF_JOB_CAPABILITIES, HF_JOB_PROVIDER } from "./capabilities.js";
import { toJobSpec } from "./job-create-spec.js";
import { LABEL, fitsLabel } from "./job-marks.js";
import type { PortProbe } from "./job-port-probe.js";
import { toJobReport } from "./job-report.js";
import type { HfJob } from "./jobs-model.js";
import type { JobsTransport } from "./jobs-transport.js";

export interface HuggingFaceJobsProviderOptions {
  readonly transport: JobsTransport;
  readonly namespace: string;
  readonly clock: Clock;
  /** Passed to every job as Job secrets (e.g. `HF_TOKEN` for gated models); never as plain env. */
  readonly secrets?: Readonly<Record<string, RevealableToken>>;
  /** When set, describe probes a RUNNING job's port and reports `ready` from the answer. */
  readonly probe?: PortProbe;
  /** When set, stop refuses (`not_ours`) a job that does not carry this owner tag. */
  readonly ownerTag?: string;
  /** Listing pages followed at most (default 100); a longer listing is reported incomplete. */
  readonly maxPages?: number;
  /** Job id → the name it was created under, for every job the caller holds a record of. */
  readonly recordedNames?: () => ReadonlyMap<string, string>;
}

function causeOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function answeredRefusal(error: unknown): error is HuggingFaceApiError {
  return (
    error instanceof HuggingFaceApiError &&
    error.status !== undefined &&
    error.status >= 400 &&
    error.status < 500 &&
    error.kind !== "uncertain"
  );
}

export class HuggingFaceJobsProvider implements ProviderPort {
  readonly capabilities: ProviderCapabilities = HF_JOB_CAPABILITIES;
  readonly namespace: string;
  readonly #o: HuggingFaceJobsProviderOptions;
  readonly #maxPages: number;

  constructor(options: HuggingFaceJobsProviderOptions) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(options.namespace))
      throw new RangeError(
        `HuggingFaceJobsProvider: namespace "${options.namespace}" is not a Hub user or org name`,
      );
    if (options.ownerTag !== undefined && options.ownerTag.trim() === "")
      throw new RangeError("HuggingFaceJobsProvider: ownerTag must not be empty when given");
    const maxPages = options.maxPages ?? 100;
    if (!Number.isInteger(maxPages) || maxPages < 1 || maxPages > 10_000)
      throw new RangeError(
        `HuggingFaceJobsProvider: maxPages must be an integer in [1, 10000], got ${maxPages}`,
      );
    for (const name of Object.keys(options.secrets ?? {}))
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
        throw new RangeError(
          `HuggingFaceJobsProvider: secret name "${name}" is not an environment variable name`,
        );
    this.namespace = options.namespace;
    this.#o = options;
    this.#maxPages = maxPages;
  }

  async create(request: CreateRequest): Promise<CreateOutcome> {
    const spec = toJobSpec(request, this.namespace, this.#o.secrets ?? {});
    if (!spec.ok) return { kind: "refused", ...spec.error };
    let job: HfJob;
    try {
      job = await this.#o.transport.createJob(this.namespace, spec.value);
    } catch (error) {
      if (answeredRefusal(error))
        return { kind: "refused", code: error.kind, message: error.providerMessage ?? error.message };
      if (
        error instanceof HuggingFaceApiError &&
        (error.kind === "unreachable" || error.kind === "certificate")
      )
        return { kind: "refused", code: error.kind, message: error.message };
      // No answer, a 5xx or an unreadable answer: it may exist. findByRequest / reconciliation find it.
      return { kind: "lost", cause: causeOf(error) };
    }
    return { kind: "created", report: toJobReport(job) };
  }

  /** Every job of the namespace, all pages. Throws when a page cannot be read. */
  async list(): Promise<Listing> {
    const startedAtMs = this.#o.clock.now().wallMs;
    const { jobs, complete } = await this.#all({});
    const recorded = this.#o.recordedNames?.();
    return {
      complete,
      startedAtMs,
      resources: jobs.map((job) => toJobReport(job, undefined, recorded?.get(job.id))),
    };
  }

  /**
   * The jobs a create with this owner tag and request id left behind (a lost answer), found by
   * listing with the owner label (request ids that do not fit a label are matched from env).
   */
  async findByRequest(ownerTag: string, requestId: string): Promise<ResourceReport[]> {
    const filter = fitsLabel(ownerTag) ? { labels: { [LABEL.ownerTag]: ownerTag } } : {};
    const { jobs } = await this.#all(filter);
    return jobs
      .map((job) => toJobReport(job))
      .filter((report) => report.ownerTag === ownerTag && report.requestId === requestId);
  }

  async describe(key: ResourceKey): Promise<DescribeOutcome> {
    if (!this.#mine(key)) return { kind: "unknown", cause: this.#notMine(key) };
    let job: HfJob;
    try {
      job = await this.#o.transport.getJob(this.namespace, key.incarnation);
    } catch (error) {
      if (error instanceof HuggingFaceApiError && error.kind === "not_found") return { kind: "not-found" };
      return { kind: "unknown", cause: causeOf(error) };
    }
    const recordedName = this.#o.recordedNames?.().get(job.id);
    if ((recordedName ?? job.labels[LABEL.name] ?? job.id) !== key.name) return { kind: "not-found" };
    const url = job.exposeUrls[0];
    const answered =
      this.#o.probe !== undefined && job.stage === "RUNNING" && url !== undefined
        ? await this.#o.probe(url)
        : undefined;
    return { kind: "found", report: toJobReport(job, answered, recordedName) };
  }

  /** Cancel the exact job (terminate). Jobs cannot pause: a pause is refused. */
  async stop(key: ResourceKey, mode: StopMode): Promise<StopOutcome> {
    if (mode === "pause")
      return {
        kind: "refused",
        code: "pause_unsupported",
        message: "Hugging Face Jobs cannot be paused; stop with terminate (cancel)",
      };
    if (!this.#mine(key)) return { kind: "refused", code: "wrong_account", message: this.#notMine(key) };
    let job: HfJob;
    try {
      job = await this.#o.transport.getJob(this.namespace, key.incarnation);
    } catch (error) {
      if (error instanceof HuggingFaceApiError && error.kind === "not_found")
        return {
          kind: "refused",
          code: "not_found",
          message: `job ${this.namespace}/${key.incarnation} does not exist`,
        };
      return this.#failure(error);
    }
    if (this.#o.ownerTag !== undefined && toJobReport(job).ownerTag !== this.#o.ownerTag)
      return {
        kind: "refused",
        code: "not_ours",
        message: `job ${this.namespace}/${job.id} does not carry this sponsor's owner tag: left alone`,
      };
    try {
      const after = await this.#o.transport.cancelJob(this.namespace, key.incarnation);
      // Answered 200 while HF still reports a billed stage: not proof that billing stopped.
      if (after !== undefined && this.capabilities.chargingStatuses.includes(after.rawStage))
        return {
          kind: "unknown",
          cause:
            `Hugging Face accepted the cancel of job ${this.namespace}/${key.incarnation} but still ` +
            `reports it ${after.rawStage} (billed): unconfirmed, cancelled again until it shows an end`,
        };
      return { kind: "accepted" };
    } catch (error) {
      return this.#failure(error);
    }
  }

  async #all(filter: { labels?: Record<string, string> }): Promise<{ jobs: HfJob[]; complete: boolean }> {
    const jobs: HfJob[] = [];
    let next: string | undefined;
    for (let page = 0; page < this.#maxPages; page++) {
      const got = await this.#o.transport.listJobsPage(this.namespace, filter, next);
      jobs.push(...got.jobs);
      next = got.next;
      if (next === undefined) return { jobs, complete: true };
    }
    return { jobs, complete: false };
  }

  #mine(key: ResourceKey): boolean {
    return key.provider === HF_JOB_PROVIDER && key.account === this.namespace;
  }

  #notMine(key: ResourceKey): string {
    return `key ${key.provider}:${key.account}/${key.name} is not a ${HF_JOB_PROVIDER} of namespace ${this.namespace}`;
  }

  #failure(error: unknown): StopOutcome {
    // A 429's retry-after travels with the outcome: the controller sends no cancel again sooner.
    const wait = retryAfterOf(error);
    if (answeredRefusal(error))
      return { kind: "refused", code: error.kind, message: error.providerMessage ?? error.message, ...wait };
    return { kind: "unknown", cause: causeOf(error), ...wait };
  }
}
