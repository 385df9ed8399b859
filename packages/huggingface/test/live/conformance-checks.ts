/**
 * The Hugging Face live conformance steps, run against any base URLs (the emulator in virtual time,
 * or live Hugging Face): what emulators cannot prove — error bodies of the Endpoints and Jobs APIs,
 * the 503 of a scaled-to-zero endpoint and `X-Scale-Up-Timeout`, that a pause is reported as
 * `paused` (not billed), that `createdAt` changes when a name is recreated, and the Jobs exposed-port
 * auth (no token, a wrong token, the right token), and what PAIR's creates rely on (serving-checks.ts:
 * what `/v1/models` lists, resume while running, `createdAt` text, a catalog deploy) — recorded as
 * findings for the JSON report.
 * Hard budget: before anything is created, the listed prices × the deadline must fit `maxUsd`;
 * everything created is deleted/cancelled in `finally`, and also by `cleanup()` for afterAll.
 */

import { rootCertificates } from "node:tls";
import { Agent, request } from "undici";
import {
  HuggingFaceApiError,
  type EndpointsTransport,
  type HfEndpoint,
  type JobsTransport,
  type RevealableToken,
} from "../../src/index.js";
import {
  catalogChecks,
  emptyServingFindings,
  runningChecks,
  type ServingContext,
  type ServingFindings,
} from "./serving-checks.js";

export interface HfConformanceOptions {
  readonly endpoints: EndpointsTransport;
  readonly jobs: JobsTransport;
  readonly namespace: string;
  /** The Endpoints API's base URL, for raw answers (e.g. https://api.endpoints.huggingface.cloud). */
  readonly endpointsApi: string;
  /** A model of HF's endpoint catalog, deployed through the catalog's deploy call. */
  readonly catalogModel: string;
  readonly token: RevealableToken;
  readonly extraCaPem?: string;
  /** Waits `ms` (live: real time; emulator: advances virtual time). */
  wait(ms: number): Promise<void>;
  nowMs(): number;
  readonly endpoint: {
    readonly vendor: string;
    readonly region: string;
    readonly instanceType: string;
    readonly instanceSize: string;
  };
  readonly jobFlavor: string;
  readonly model: string;
  readonly image: string;
  /** Unique per run (the endpoint's name and the job's name label). */
  readonly runName: string;
  readonly deadlineMs: number;
  readonly maxUsd: number;
  readonly pollMs: number;
  readonly scaleUpTimeoutS: number;
  log(line: string): void;
}

export interface ApiErrorSeen {
  readonly status: number | undefined;
  readonly kind: string;
  readonly message: string | undefined;
  readonly requestId: string | undefined;
}

export interface HttpSeen {
  readonly status: number | "no-answer";
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly elapsedMs: number;
}

export interface HfFindings {
  budget: { endpointUsdPerHour: number; jobUsdPerHour: number; deadlineMin: number; worstCaseUsd: number };
  errorBodies: { missingEndpoint?: ApiErrorSeen; missingJob?: ApiErrorSeen; invalidFlavor?: ApiErrorSeen };
  scaleToZero: { reachedState?: string; withoutHeader?: HttpSeen; withHeader?: HttpSeen };
  pause: { reportedState?: string; reportsPaused: boolean };
  recreate: { firstCreatedAt?: string; secondCreatedAt?: string; createdAtChanged: boolean };
  jobs: {
    jobId?: string;
    stagesSeen: string[];
    beforeReady?: HttpSeen;
    portAnsweredAfterMs?: number;
    noToken?: HttpSeen;
    wrongToken?: HttpSeen;
    withToken?: HttpSeen;
    afterCancelStage?: string;
  };
  serving: ServingFindings;
  cleanup: string[];
}

const KEEP_HEADERS = [
  "retry-after",
  "x-request-id",
  "x-error-code",
  "x-error-message",
  "content-type",
  "www-authenticate",
];

export class HfConformance {
  readonly #o: HfConformanceOptions;
  readonly #agent: Agent;
  readonly findings: HfFindings = {
    budget: { endpointUsdPerHour: 0, jobUsdPerHour: 0, deadlineMin: 0, worstCaseUsd: 0 },
    errorBodies: {},
    scaleToZero: {},
    pause: { reportsPaused: false },
    recreate: { createdAtChanged: false },
    jobs: { stagesSeen: [] },
    serving: emptyServingFindings(),
    cleanup: [],
  };
  /** Endpoints this run created and has not deleted yet. */
  readonly #created = new Set<string>();
  #jobId: string | undefined;

  constructor(options: HfConformanceOptions) {
    if (!(options.maxUsd > 0 && options.maxUsd <= 2)) throw new RangeError("maxUsd: must be in (0, 2]");
    if (!(options.deadlineMs > 0 && options.deadlineMs <= 45 * 60_000))
      throw new RangeError("deadlineMs: must be in (0, 45 min]");
    this.#o = options;
    this.#agent = new Agent({
      connect: {
        ...(options.extraCaPem === undefined ? {} : { ca: [...rootCertificates, options.extraCaPem] }),
        rejectUnauthorized: true,
      },
      headersTimeout: (options.scaleUpTimeoutS + 60) * 1000,
    });
  }

  /** Every step, then cleanup. Throws (after cleaning up) when the budget does not fit. */
  async run(): Promise<HfFindings> {
    try {
      this.#o.log("hf conformance: budget check (prices × deadline)");
      await this.#checkBudget();
      this.#o.log("hf conformance: error bodies");
      await this.#errorBodies();
      this.#o.log("hf conformance: endpoint (scale-to-zero 503, X-Scale-Up-Timeout, pause, recreate)");
      await this.#endpointChecks();
      this.#o.log("hf conformance: catalog deploy (its recipe, /v1/models)");
      await this.#catalogChecks();
      this.#o.log("hf conformance: job (exposed-port auth, cancel)");
      await this.#jobChecks();
    } finally {
      await this.cleanup();
    }
    return this.findings;
  }

  /** Deletes the endpoint and cancels the job this run created (idempotent; for afterAll too). */
  async cleanup(): Promise<void> {
    const { endpoints, jobs, namespace } = this.#o;
    for (const name of [...this.#created]) {
      try {
        await endpoints.deleteEndpoint(namespace, name);
        this.findings.cleanup.push(`deleted endpoint ${name}`);
      } catch (error) {
        if (!(error instanceof HuggingFaceApiError && error.kind === "not_found"))
          this.findings.cleanup.push(
            `DELETE OF ENDPOINT ${name} FAILED: ${String(error)} — delete it by hand`,
          );
      }
      this.#created.delete(name);
    }
    if (this.#jobId !== undefined) {
      try {
        await jobs.cancelJob(namespace, this.#jobId);
        this.findings.cleanup.push(`cancelled job ${this.#jobId}`);
      } catch (error) {
        this.findings.cleanup.push(
          `CANCEL OF JOB ${this.#jobId} FAILED: ${String(error)} — cancel it by hand`,
        );
      }
      this.#jobId = undefined;
    }
    await this.#agent.close().catch(() => undefined);
  }

  #left(started: number): number {
    return this.#o.deadlineMs - (this.#o.nowMs() - started);
  }

  async #checkBudget(): Promise<void> {
    const { endpoints, jobs, namespace, endpoint, jobFlavor } = this.#o;
    const offers = await endpoints.listProviderCompute(namespace);
    const offer = offers.find(
      (o) =>
        o.vendor === endpoint.vendor &&
        o.region === endpoint.region &&
        o.instanceType === endpoint.instanceType &&
        o.instanceSize === endpoint.instanceSize,
    );
    const flavor = (await jobs.hardware()).find((f) => f.name === jobFlavor);
    if (offer === undefined || flavor === undefined)
      throw new Error(
        `budget: no listed price for endpoint ${endpoint.instanceType} ${endpoint.instanceSize} or job flavor ${jobFlavor}; nothing was created`,
      );
    const endpointUsdPerHour = offer.pricePerHourUsd;
    const jobUsdPerHour = flavor.usdPerMinute * 60 + 0.01;
    const deadlineMin = this.#o.deadlineMs / 60_000;
    // The catalog's endpoint counts at the same price: its recipe's instance is known only once deployed.
    const worstCaseUsd = ((2 * endpointUsdPerHour + jobUsdPerHour) * deadlineMin) / 60;
    this.findings.budget = { endpointUsdPerHour, jobUsdPerHour, deadlineMin, worstCaseUsd };
    if (!(worstCaseUsd <= this.#o.maxUsd))
      throw new Error(
        `budget: worst case ${worstCaseUsd.toFixed(2)} USD exceeds maxUsd ${this.#o.maxUsd}; nothing was created`,
      );
  }

  async #apiError(call: () => Promise<unknown>): Promise<ApiErrorSeen | undefined> {
    try {
      await call();
      return undefined;
    } catch (error) {
      if (!(error instanceof HuggingFaceApiError)) throw error;
      return {
        status: error.status,
        kind: error.kind,
        message: error.providerMessage,
        requestId: error.requestId,
      };
    }
  }

  async #errorBodies(): Promise<void> {
    const { endpoints, jobs, namespace } = this.#o;
    const e = this.findings.errorBodies;
    const missingEndpoint = await this.#apiError(() =>
      endpoints.getEndpoint(namespace, "pair-conformance-missing"),
    );
    const missingJob = await this.#apiError(() => jobs.getJob(namespace, "000000000000000000000000"));
    const invalidFlavor = await this.#apiError(async () => {
      const job = await jobs.createJob(namespace, {
        dockerImage: "python:3.12",
        command: ["true"],
        environment: {},
        secrets: {},
        flavor: "pair-no-such-flavor",
        timeoutSeconds: 60,
        labels: {},
        exposePorts: [],
      });
      // Accepted after all: cancel it at once, and say so.
      await jobs.cancelJob(namespace, job.id);
      this.findings.cleanup.push(`an invalid-flavor job was accepted (${job.id}) and cancelled`);
    });
    if (missingEndpoint) e.missingEndpoint = missingEndpoint;
    if (missingJob) e.missingJob = missingJob;
    if (invalidFlavor) e.invalidFlavor = invalidFlavor;
  }

  /** A GET, its body cut at `limit` characters, the token replaced wherever it appears. */
  async #http(url: string, headers: Record<string, string>, limit = 500): Promise<HttpSeen> {
    const started = this.#o.nowMs();
    try {
      const res = await request(url, { method: "GET", dispatcher: this.#agent, headers });
      const text = (await res.body.text()).slice(0, limit).split(this.#o.token.reveal()).join("[token]");
      const kept: Record<string, string> = {};
      for (const name of KEEP_HEADERS) {
        const value = res.headers[name];
        if (typeof value === "string") kept[name] = value;
      }
      return { status: res.statusCode, body: text, headers: kept, elapsedMs: this.#o.nowMs() - started };
    } catch (error) {
      return {
        status: "no-answer",
        body: error instanceof Error ? error.message : String(error),
        headers: {},
        elapsedMs: this.#o.nowMs() - started,
      };
    }
  }

  /** Polls `read` until `done` or the deadline; returns the last value. */
  async #until<T>(started: number, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
    let value = await read();
    while (!done(value) && this.#left(started) > 0) {
      await this.#o.wait(this.#o.pollMs);
      value = await read();
    }
    return value;
  }

  async #endpointChecks(): Promise<void> {
    const { endpoints, namespace, runName, endpoint, model, image } = this.#o;
    const started = this.#o.nowMs();
    const spec = {
      name: runName,
      accessType: "private" as const,
      ...endpoint,
      accelerator: "gpu",
      minReplica: 0,
      maxReplica: 1,
      scaleToZeroTimeoutMin: 15,
      repository: model,
      task: "text-generation",
      image: { vLLM: { url: image, port: 8000, healthRoute: "/health" } },
      tags: ["pair-conformance"],
    };
    this.#created.add(runName);
    const first = await endpoints.createEndpoint(namespace, spec);
    this.findings.recreate.firstCreatedAt = first.incarnation;
    const get = () => endpoints.getEndpoint(namespace, runName);
    const running = await this.#until(started, get, (ep) => ep.state === "running");
    if (running.state !== "running")
      throw new Error(`endpoint never ran before the deadline (last state ${running.rawState})`);
    await runningChecks(this.#servingContext(started), running, this.findings.serving);
    await endpoints.scaleToZero(namespace, runName);
    const zero = await this.#until(started, get, (ep: HfEndpoint) => ep.state === "scaledToZero");
    this.findings.scaleToZero.reachedState = zero.rawState;
    const url = `${(zero.url ?? running.url ?? "").replace(/\/+$/, "")}/v1/models`;
    const auth = { authorization: `Bearer ${this.#o.token.reveal()}` };
    this.findings.scaleToZero.withoutHeader = await this.#http(url, auth);
    // The first call may have woken it: let it run again, send it back to zero, then ask with the header.
    await this.#until(
      started,
      get,
      (ep: HfEndpoint) => ep.state === "running" || ep.state === "scaledToZero",
    );
    await endpoints.scaleToZero(namespace, runName).catch(() => undefined);
    await this.#until(started, get, (ep: HfEndpoint) => ep.state === "scaledToZero");
    const held = this.#http(url, { ...auth, "x-scale-up-timeout": String(this.#o.scaleUpTimeoutS) });
    let answer: HttpSeen | undefined;
    void held.then((seen) => (answer = seen));
    for (
      let waited = 0;
      answer === undefined && waited <= this.#o.scaleUpTimeoutS * 1000 && this.#left(started) > 0;
      waited += this.#o.pollMs
    ) {
      await this.#o.wait(this.#o.pollMs);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    this.findings.scaleToZero.withHeader = answer ?? (await held);

    const paused = await endpoints.pause(namespace, runName);
    const after = await this.#until(started, get, (ep) => ep.state === "paused");
    this.findings.pause = {
      reportedState: after.rawState,
      reportsPaused: after.state === "paused" || paused.state === "paused",
    };

    await endpoints.deleteEndpoint(namespace, runName);
    this.#created.delete(runName);
    // The name may stay reserved while the delete finishes ([?] §7.9): retry the create until the deadline.
    let second: HfEndpoint | undefined;
    while (second === undefined && this.#left(started) > 0) {
      try {
        this.#created.add(runName);
        second = await endpoints.createEndpoint(namespace, spec);
      } catch (error) {
        if (!(
          error instanceof HuggingFaceApiError &&
          (error.kind === "conflict" || error.kind === "invalid_request")
        ))
          throw error;
        this.#created.delete(runName);
        await this.#o.wait(this.#o.pollMs);
      }
    }
    if (second !== undefined) this.findings.recreate.secondCreatedAt = second.incarnation;
    this.findings.recreate.createdAtChanged =
      second !== undefined && second.incarnation !== first.incarnation;
    await endpoints.deleteEndpoint(namespace, runName);
    this.#created.delete(runName);
  }

  #servingContext(started: number): ServingContext {
    const auth = { authorization: `Bearer ${this.#o.token.reveal()}` };
    return {
      endpoints: this.#o.endpoints,
      namespace: this.#o.namespace,
      endpointsApi: this.#o.endpointsApi.replace(/\/+$/, ""),
      get: (url) => this.#http(url, auth, 64_000),
      until: (read, done) => this.#until(started, read, done),
      created: this.#created,
    };
  }

  async #catalogChecks(): Promise<void> {
    const { endpoints, namespace, runName, catalogModel } = this.#o;
    const offers = await endpoints.listProviderCompute(namespace);
    const priceOf = (e: HfEndpoint) =>
      Promise.resolve(
        offers.find(
          (o) =>
            o.instanceType === e.instanceType && o.instanceSize === e.instanceSize && o.region === e.region,
        )?.pricePerHourUsd,
      );
    await catalogChecks(
      this.#servingContext(this.#o.nowMs()),
      {
        repoId: catalogModel,
        name: `${runName}-cat`.slice(0, 32),
        maxUsdPerHour: this.findings.budget.endpointUsdPerHour,
      },
      priceOf,
      this.findings.serving,
    );
  }

  async #jobChecks(): Promise<void> {
    const { jobs, namespace, runName, model, image, jobFlavor } = this.#o;
    const started = this.#o.nowMs();
    const job = await jobs.createJob(namespace, {
      dockerImage: image,
      command: ["vllm", "serve", model, "--host", "0.0.0.0", "--port", "8000", "--max-model-len", "2048"],
      environment: {},
      secrets: {},
      flavor: jobFlavor,
      timeoutSeconds: Math.ceil(this.#o.deadlineMs / 1000),
      labels: { name: runName, "pair-conformance": "1" },
      exposePorts: [8000],
    });
    this.#jobId = job.id;
    const j = this.findings.jobs;
    j.jobId = job.id;
    const auth = { authorization: `Bearer ${this.#o.token.reveal()}` };
    let url: string | undefined = job.exposeUrls[0];
    for (;;) {
      const now = await jobs.getJob(namespace, job.id);
      if (j.stagesSeen.at(-1) !== now.rawStage) j.stagesSeen.push(now.rawStage);
      url ??= now.exposeUrls[0];
      if (now.stage !== "SCHEDULING" && now.stage !== "RUNNING") break;
      if (url !== undefined && now.stage === "RUNNING") {
        const seen = await this.#http(`${url}/v1/models`, auth);
        if (seen.status === 200) {
          j.withToken = seen;
          j.portAnsweredAfterMs = this.#o.nowMs() - started;
          break;
        }
        j.beforeReady ??= seen;
      }
      if (this.#left(started) <= 0) break;
      await this.#o.wait(this.#o.pollMs);
    }
    if (url !== undefined) {
      j.noToken = await this.#http(`${url}/v1/models`, {});
      j.wrongToken = await this.#http(`${url}/v1/models`, {
        authorization: "Bearer hf_pair_conformance_not_a_token",
      });
    }
    await jobs.cancelJob(namespace, job.id);
    const ended = await this.#until(
      started,
      () => jobs.getJob(namespace, job.id),
      (now) => now.stage !== "RUNNING" && now.stage !== "SCHEDULING",
    );
    j.afterCancelStage = ended.rawStage;
    if (j.stagesSeen.at(-1) !== ended.rawStage) j.stagesSeen.push(ended.rawStage);
    this.#jobId = undefined;
  }
}
