/**
 * The HTTPS implementation of JobsTransport, on undici, against the hub host (`hub_api`,
 * configurable; default https://huggingface.co): certificate verification always on (an extra CA
 * may be added to the system roots, nothing turns checks off), connect/response timeouts, the
 * bearer token revealed only into the outgoing header, and the shared retry policy: reads and
 * cancel retry on 429/503 after `retry-after` and on 5xx/lost answers with backoff; create is never
 * retried — a lost answer or a 5xx is `uncertain`, resolved by listing with the owner labels. A 429's
 * retry-after closes the `RetryAfterGate` it shares with the sponsor's other HF clients: the refused
 * call waits it out, any other call fails `rate_limited` without being sent.
 * Must not know: PAIR's lifecycle or stage mapping, where the token is stored.
 */

import { rootCertificates } from "node:tls";
import { Agent, request } from "undici";
import { HuggingFaceApiError, kindOfStatus, providerMessageOf } from "../errors.js";
import {
  DEFAULT_HUB_API,
  HfTransportOptionError,
  baseUrl,
  boundedMs,
  classify,
  headerValue,
} from "../https-transport.js";
import type { HfAccount } from "../model.js";
import { RetryAfterGate } from "../retry-after-gate.js";
import {
  DEFAULT_RETRY_POLICY,
  decideRetry,
  parseRetryAfter,
  validateRetryPolicy,
  type RetryPolicy,
} from "../retry-policy.js";
import type { RevealableToken } from "../secret-token.js";
import { WireShapeError, readWhoami } from "../wire.js";
import { toAccount } from "../wire-mapping.js";
import type { HfJob, HfJobFlavor, HfJobPage, HfJobSpec } from "./jobs-model.js";
import type { JobsListFilter, JobsTransport } from "./jobs-transport.js";
import { nextLink, readHardware, readJob, readJobList, toJobCreateBody } from "./jobs-wire.js";

export interface HttpsJobsTransportOptions {
  readonly token: RevealableToken;
  /** The hub (Jobs live under `/api/jobs`). Default https://huggingface.co. */
  readonly hubApi?: string;
  readonly extraCaPem?: string;
  /** Default 10 s. */
  readonly connectTimeoutMs?: number;
  /** Default 30 s. */
  readonly responseTimeoutMs?: number;
  readonly retry?: Partial<RetryPolicy>;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
  readonly nowMs?: () => number;
  /** The retry-after window shared with the sponsor's other Hugging Face clients (default: its own). */
  readonly gate?: RetryAfterGate;
}

interface Call<T> {
  readonly operation: string;
  readonly method: "GET" | "POST";
  readonly url: string;
  readonly body?: unknown;
  readonly idempotent: boolean;
  readonly read: (json: unknown, link: string | undefined) => T;
}

const enc = encodeURIComponent;

export class HttpsJobsTransport implements JobsTransport {
  readonly #token: RevealableToken;
  readonly #hub: string;
  readonly #agent: Agent;
  readonly #policy: RetryPolicy;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;
  readonly #now: () => number;
  readonly #gate: RetryAfterGate;

  constructor(options: HttpsJobsTransportOptions) {
    if (typeof options.token?.reveal !== "function")
      throw new HfTransportOptionError("invalid_option", "token: expected an object with reveal()");
    this.#token = options.token;
    this.#hub = baseUrl("hub_api", options.hubApi ?? DEFAULT_HUB_API);
    this.#policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    const problems = validateRetryPolicy(this.#policy);
    if (problems.length > 0)
      throw new HfTransportOptionError("invalid_option", `retry: ${problems.join("; ")}`);
    const responseTimeoutMs = boundedMs("responseTimeoutMs", options.responseTimeoutMs, 30_000);
    this.#agent = new Agent({
      connect: {
        ...(options.extraCaPem === undefined ? {} : { ca: [...rootCertificates, options.extraCaPem] }),
        rejectUnauthorized: true,
        timeout: boundedMs("connectTimeoutMs", options.connectTimeoutMs, 10_000),
      },
      headersTimeout: responseTimeoutMs,
      bodyTimeout: responseTimeoutMs,
    });
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#random = options.random ?? Math.random;
    this.#now = options.nowMs ?? Date.now;
    this.#gate = options.gate ?? new RetryAfterGate();
  }

  toString(): string {
    return `HttpsJobsTransport(${this.#hub})`;
  }

  async #call<T>(spec: Call<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const closedForMs = this.#gate.closedForMs(this.#now());
      // A retry (the refused call itself) waits the rest of the window; a new call is not sent.
      if (closedForMs > 0 && attempt > 1) await this.#sleep(closedForMs);
      else if (closedForMs > 0)
        throw new HuggingFaceApiError({
          kind: "rate_limited",
          operation: spec.operation,
          retryAfterMs: closedForMs,
          detail: `not sent: Hugging Face asked for no requests for another ${Math.ceil(closedForMs / 1000)} s (retry-after)`,
        });
      let status: number;
      let text: string;
      let headers: Record<string, string | string[] | undefined>;
      try {
        const res = await request(spec.url, {
          method: spec.method,
          dispatcher: this.#agent,
          headers: {
            authorization: `Bearer ${this.#token.reveal()}`,
            accept: "application/json",
            "user-agent": "pair-huggingface/0.1",
            ...(spec.body === undefined ? {} : { "content-type": "application/json" }),
          },
          ...(spec.body === undefined ? {} : { body: JSON.stringify(spec.body) }),
        });
        status = res.statusCode;
        headers = res.headers;
        text = await res.body.text();
      } catch (error) {
        const failure = classify(error);
        if (failure.certificate)
          throw new HuggingFaceApiError({
            kind: "certificate",
            operation: spec.operation,
            detail: failure.detail,
            cause: error,
          });
        const decision = decideRetry(
          this.#policy,
          spec.idempotent,
          attempt,
          { kind: "no-answer", sent: failure.sent },
          this.#random(),
        );
        if (decision.retry) {
          await this.#sleep(decision.delayMs);
          continue;
        }
        throw new HuggingFaceApiError({
          kind: failure.sent && !spec.idempotent ? "uncertain" : "unreachable",
          operation: spec.operation,
          detail: failure.detail,
          cause: error,
        });
      }
      const requestId = headerValue(headers["x-request-id"]);
      if (status >= 200 && status < 300) {
        try {
          return spec.read(
            text.trim() === "" ? undefined : (JSON.parse(text) as unknown),
            headerValue(headers["link"]),
          );
        } catch (error) {
          const detail = error instanceof WireShapeError ? error.message : `not JSON (${text.slice(0, 80)})`;
          throw new HuggingFaceApiError({
            kind: spec.idempotent ? "protocol" : "uncertain",
            operation: spec.operation,
            status,
            requestId,
            detail,
            cause: error,
          });
        }
      }
      const retryAfterMs = parseRetryAfter(headerValue(headers["retry-after"]), this.#now());
      if (status === 429 && retryAfterMs !== undefined) this.#gate.close(this.#now() + retryAfterMs);
      const decision = decideRetry(
        this.#policy,
        spec.idempotent,
        attempt,
        { kind: "status", status, retryAfterMs },
        this.#random(),
      );
      if (decision.retry) {
        await this.#sleep(decision.delayMs);
        continue;
      }
      throw new HuggingFaceApiError({
        kind: !spec.idempotent && status >= 500 ? "uncertain" : kindOfStatus(status),
        operation: spec.operation,
        status,
        providerMessage: providerMessageOf(text),
        requestId,
        retryAfterMs,
      });
    }
  }

  #jobsUrl(namespace: string, id?: string, action?: string): string {
    const base = `${this.#hub}/api/jobs/${enc(namespace)}`;
    return id === undefined ? base : `${base}/${enc(id)}${action === undefined ? "" : `/${action}`}`;
  }

  whoami(): Promise<HfAccount> {
    return this.#call({
      operation: "whoami",
      method: "GET",
      url: `${this.#hub}/api/whoami-v2`,
      idempotent: true,
      read: (json) => toAccount(readWhoami(json)),
    });
  }

  listJobsPage(namespace: string, filter: JobsListFilter = {}, pageUrl?: string): Promise<HfJobPage> {
    let url = pageUrl;
    if (url === undefined) {
      const query = new URLSearchParams();
      for (const stage of filter.stages ?? []) query.append("stage", stage);
      for (const [key, value] of Object.entries(filter.labels ?? {}))
        query.append("label", `${key}=${value}`);
      const qs = query.toString();
      url = `${this.#jobsUrl(namespace)}${qs === "" ? "" : `?${qs}`}`;
    } else if (!url.startsWith(`${this.#hub}/`)) {
      // A next link pointing elsewhere would receive our token: refuse it.
      return Promise.reject(
        new HuggingFaceApiError({
          kind: "protocol",
          operation: `listJobs ${namespace}`,
          detail: `the next-page link leaves ${this.#hub}; not followed`,
        }),
      );
    }
    return this.#call({
      operation: `listJobs ${namespace}`,
      method: "GET",
      url,
      idempotent: true,
      read: (json, link) => ({ jobs: readJobList(json, namespace), next: nextLink(link) }),
    });
  }

  getJob(namespace: string, id: string): Promise<HfJob> {
    return this.#call({
      operation: `getJob ${namespace}/${id}`,
      method: "GET",
      url: this.#jobsUrl(namespace, id),
      idempotent: true,
      read: (json) => readJob(json, namespace),
    });
  }

  createJob(namespace: string, spec: HfJobSpec): Promise<HfJob> {
    return this.#call({
      operation: `createJob ${namespace}`,
      method: "POST",
      url: this.#jobsUrl(namespace),
      body: toJobCreateBody(spec),
      idempotent: false,
      read: (json) => readJob(json, namespace),
    });
  }

  cancelJob(namespace: string, id: string): Promise<HfJob | undefined> {
    return this.#call({
      operation: `cancelJob ${namespace}/${id}`,
      method: "POST",
      url: this.#jobsUrl(namespace, id, "cancel"),
      idempotent: true,
      // Python ignores the answer; JS reads a Job. Either is fine.
      read: (json) => (json === undefined ? undefined : readJob(json, namespace)),
    });
  }

  hardware(): Promise<HfJobFlavor[]> {
    return this.#call({
      operation: "hardware",
      method: "GET",
      url: `${this.#hub}/api/jobs/hardware`,
      idempotent: true,
      read: (json) => readHardware(json),
    });
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}
