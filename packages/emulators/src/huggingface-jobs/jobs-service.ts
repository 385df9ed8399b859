/**
 * The Hugging Face Jobs emulator, mounted on the Hugging Face emulator's server (the hub host, so
 * `/api/whoami-v2` answers beside it with the same tokens and clock): the Jobs API routes with the
 * request-level faults (429 with retry-after, 5xx, lost answers, held requests) and request ids, the
 * exposed-port proxy, and what tests inspect (jobs without secrets, the meter, the faults, the
 * container env, the API requests received with their virtual and real arrival times).
 * Must not know: the Endpoints world, TLS, how the server listens.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { EngineHandler } from "../engine/handler.js";
import type { EmulatorTime } from "../huggingface/emulator-time.js";
import type { ControlDecision } from "../huggingface/control-faults.js";
import type { TokenRegistry } from "../huggingface/tokens.js";
import { DEFAULT_FLAVORS, type JobFlavor } from "./flavors.js";
import { readJsonBody, sendError } from "./http-io.js";
import type { JobStage } from "./job-stages.js";
import { JobsFaults } from "./jobs-faults.js";
import { streamLogs } from "./jobs-logs.js";
import { JobsMeter } from "./jobs-meter.js";
import { handleJobsProxy } from "./jobs-proxy.js";
import { isJobsPath, jobsReply, writeJobsReply, type JobsRouteContext } from "./jobs-routes.js";
import { exposeUrl } from "./jobs-wire.js";
import { JobsWorld, type JobRecord, type JobTimings } from "./jobs-world.js";

export interface JobsEmulatorOptions {
  /** Defaults: scheduling 20 s, model load 90 s (virtual). */
  readonly timings?: Partial<JobTimings>;
  readonly flavors?: readonly JobFlavor[];
  /** Jobs per listing page before a `Link: rel="next"` (default 50). */
  readonly pageSize?: number;
}

/** One Jobs API request as it arrived (not the exposed-port proxy). */
export interface JobsRequestSeen {
  readonly method: string;
  readonly path: string;
  /** Virtual wall time, epoch ms. */
  readonly atMs: number;
  /** Real monotonic time (`performance.now()`): retry-after waits are real time on the client. */
  readonly atRealMs: number;
  /** What the fault switches did with it. */
  readonly fault: ControlDecision["kind"];
}

const MAX_REQUESTS_SEEN = 10_000;

/** What a test may inspect of one job (secret names only). */
export interface JobView {
  readonly id: string;
  readonly namespace: string;
  readonly stage: JobStage;
  readonly message: string | null;
  readonly labels: Readonly<Record<string, string>>;
  readonly flavor: string;
  readonly timeoutSeconds: number;
  readonly portUp: boolean;
  readonly secretNames: readonly string[];
  readonly exposeUrls: readonly string[];
}

export interface JobsEmulator {
  readonly meter: JobsMeter;
  readonly faults: JobsFaults;
  list(namespace?: string): JobView[];
  get(id: string): JobView | undefined;
  /** Environment the job's container sees (env + secrets + HF's variables). */
  containerEnv(id: string): Record<string, string> | undefined;
  /** A deletion outside the API (web UI): the job goes DELETED. */
  markDeleted(id: string): boolean;
  exposeUrl(id: string, port: number): string;
  /** Jobs API requests received so far, oldest first (the last 10,000). */
  requests(): readonly JobsRequestSeen[];
}

function checkedMs(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 0 || v > 24 * 3_600_000)
    throw new RangeError(
      `jobs.${name}: expected an integer number of ms in [0, 86400000], got ${String(value)}`,
    );
  return v;
}

export class HuggingFaceJobsService {
  readonly world: JobsWorld;
  readonly api: JobsEmulator;
  readonly #ctx: JobsRouteContext;
  readonly #faults = new JobsFaults();
  readonly #tokens: TokenRegistry;
  #requestIds = 0;
  readonly #seen: JobsRequestSeen[] = [];
  readonly #time: EmulatorTime;

  constructor(init: {
    time: EmulatorTime;
    tokens: TokenRegistry;
    baseUrl: () => string;
    makeEngine: (model: string) => EngineHandler;
    options?: JobsEmulatorOptions | undefined;
  }) {
    const options = init.options ?? {};
    const timings: JobTimings = {
      schedulingMs: checkedMs("timings.schedulingMs", options.timings?.schedulingMs, 20_000),
      loadMs: checkedMs("timings.loadMs", options.timings?.loadMs, 90_000),
    };
    const pageSize = options.pageSize ?? 50;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000)
      throw new RangeError(`jobs.pageSize: expected an integer in [1, 1000], got ${pageSize}`);
    const flavors = options.flavors ?? DEFAULT_FLAVORS;
    if (flavors.length === 0) throw new RangeError("jobs.flavors: expected at least one flavor");
    const meter = new JobsMeter(() => init.time.nowMs());
    this.#time = init.time;
    this.#tokens = init.tokens;
    this.world = new JobsWorld({
      time: init.time,
      timings,
      flavors,
      faults: this.#faults,
      meter,
      makeEngine: init.makeEngine,
    });
    this.#ctx = {
      world: this.world,
      tokens: init.tokens,
      flavors,
      baseUrl: init.baseUrl,
      nowMs: () => init.time.nowMs(),
      pageSize,
      hiddenFromListing: () => this.#faults.takeHiddenFromListing(),
    };
    const view = (record: JobRecord): JobView => ({
      id: record.id,
      namespace: record.namespace,
      stage: record.stage,
      message: record.message,
      labels: { ...record.labels },
      flavor: record.flavor.name,
      timeoutSeconds: record.spec.timeoutSeconds,
      portUp: record.portUp,
      secretNames: Object.keys(record.spec.secrets),
      exposeUrls: record.spec.exposePorts.map((port) => exposeUrl(init.baseUrl(), record.id, port)),
    });
    this.api = {
      meter,
      faults: this.#faults,
      list: (namespace) => {
        this.world.settle();
        return this.world
          .all()
          .filter((record) => namespace === undefined || record.namespace === namespace)
          .map(view);
      },
      get: (id) => {
        const record = this.world.byId(id);
        return record ? view(record) : undefined;
      },
      containerEnv: (id) => this.world.containerEnv(id),
      markDeleted: (id) => this.world.markDeleted(id),
      exposeUrl: (id, port) => exposeUrl(init.baseUrl(), id, port),
      requests: () => [...this.#seen],
    };
  }

  /** Serves the request when it is for Jobs (API or proxy); false otherwise. */
  handle(req: IncomingMessage, res: ServerResponse, path: string, query: string): boolean {
    if (path.startsWith("/jobs-proxy/")) {
      handleJobsProxy(this.world, this.#tokens, req, res, path, query);
      return true;
    }
    if (!isJobsPath(path)) return false;
    this.#control(req, res, path, query).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else sendError(res, 500, `jobs emulator: ${error instanceof Error ? error.message : String(error)}`);
    });
    return true;
  }

  close(): void {
    for (const record of this.world.all()) record.engine.close();
  }

  async #control(req: IncomingMessage, res: ServerResponse, path: string, query: string): Promise<void> {
    const method = req.method ?? "GET";
    res.setHeader("x-request-id", `emu-jobs-${++this.#requestIds}`);
    const decision = this.#faults.decide(method, path);
    this.#seen.push({
      method,
      path,
      atMs: this.#time.nowMs(),
      atRealMs: performance.now(),
      fault: decision.kind,
    });
    if (this.#seen.length > MAX_REQUESTS_SEEN) this.#seen.splice(0, this.#seen.length - MAX_REQUESTS_SEEN);
    if (decision.kind === "rate-limit") {
      req.resume();
      res.setHeader("retry-after", String(decision.retryAfterS));
      res.setHeader("ratelimit", `"api";r=0;t=${decision.retryAfterS}`);
      res.setHeader("ratelimit-policy", `"fixed window";"api";q=1000;w=300`);
      return sendError(
        res,
        429,
        `Too Many Requests: rate limit reached; retry after ${decision.retryAfterS} s`,
      );
    }
    if (decision.kind === "fail") {
      req.resume();
      return sendError(
        res,
        decision.status,
        `Internal error (emulated ${decision.status}); nothing was changed`,
      );
    }
    const body = await readJsonBody(req);
    const replyNow = () =>
      jobsReply(this.#ctx, {
        method,
        path,
        query: new URLSearchParams(query.startsWith("?") ? query.slice(1) : query),
        headers: req.headers,
        body,
      });
    if (decision.kind === "hold") {
      // "before-answer": carried out now, only the answer waits; "on-release": carried out only if
      // released with "apply" — even when the client has gone, as a server that read the request would.
      const early = decision.applied === "before-answer" ? replyNow() : undefined;
      const how = await this.#faults.park();
      this.world.settle();
      if (how === "drop" && early === undefined) return void req.socket.destroy();
      const late = early ?? replyNow();
      if (req.socket.destroyed) return; // the client went away: carried out, never answered
      if (late.kind === "logs")
        return streamLogs(this.world, late.record, res, new URLSearchParams(query.slice(1)));
      return writeJobsReply(res, late);
    }
    const reply = replyNow();
    if (decision.kind === "lose") {
      // The action was carried out; the answer never arrives.
      req.socket.destroy();
      return;
    }
    if (reply.kind === "logs")
      return streamLogs(this.world, reply.record, res, new URLSearchParams(query.slice(1)));
    writeJobsReply(res, reply);
  }
}
