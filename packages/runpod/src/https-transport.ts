/**
 * RunpodTransport over HTTPS with undici: `${baseUrl}/v2/...`, `Authorization: Bearer <key>` from
 * a SecretString, certificates always verified (the system roots plus an optional extra CA PEM,
 * e.g. a test CA; there is no switch to turn verification off and http:// is refused), connect /
 * headers / body timeouts, bounded response size. Only the catalogue read is retried here
 * (`readRetries`, bounded backoff honouring Retry-After); pod calls never are. Failures become
 * RunpodApiError; a create that may have reached Runpod without a readable answer (socket closed,
 * timeout or abort after sending, any 5xx but a capacity refusal) is "uncertain". After a 429 with
 * Retry-After no call is sent until it has passed: each fails `rate_limited` at once instead.
 * Must not know: PAIR's identity scheme, retry policy, where the key is stored.
 */

import { rootCertificates } from "node:tls";
import { Agent, errors as undiciErrors, request, type Dispatcher } from "undici";
import {
  RunpodApiError,
  kindOfAnswer,
  parseProblem,
  type RunpodErrorKind,
  type RunpodOperation,
} from "./errors.js";
import { parseGpuCatalog, type GpuCatalogEntry } from "./catalog-wire.js";
import { parseRateLimit, parseRetryAfterMs, type RateLimitState } from "./rate-limit.js";
import type { SecretString } from "./secret.js";
import type { CallOptions, RunpodTransport } from "./transport.js";
import {
  WireShapeError,
  parsePod,
  parsePodList,
  type CreatePodRequest,
  type Pod,
  type PodAction,
} from "./wire.js";

export interface HttpsRunpodTransportOptions {
  /** API origin, e.g. "https://api.runpod.io" (PAIR's config); "/v2" is appended (a base already ending in /v2 is kept). */
  readonly baseUrl: string;
  readonly apiKey: SecretString;
  /** CA certificates (PEM) trusted in addition to the system roots, e.g. an emulator's test CA. */
  readonly extraCaPem?: string | readonly string[];
  /** Default 10 s. */
  readonly connectTimeoutMs?: number;
  /** Time to the response headers; default 30 s. */
  readonly headersTimeoutMs?: number;
  /** Time between body chunks; default 30 s. */
  readonly bodyTimeoutMs?: number;
  /** Larger response bodies are refused as "protocol" (default 16 MiB). */
  readonly maxResponseBytes?: number;
  readonly userAgent?: string;
  /** Wall clock for Retry-After dates (default Date.now). */
  readonly now?: () => number;
  /** Retries of the catalogue read after a retryable failure (default 2; 0: none). */
  readonly readRetries?: number;
  /** The wait between catalogue retries (default a real timer); the timer seam for tests. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Backoff before catalogue retry `attempt` (1-based): Retry-After when given, capped at 5 s. */
function retryDelayMs(attempt: number, error: RunpodApiError): number {
  return Math.min(5_000, error.retryAfterMs ?? 250 * 2 ** (attempt - 1));
}

function checkedMs(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > 600_000) {
    throw new RangeError(
      `HttpsRunpodTransport option ${name}: expected an integer in [1, 600000] ms, got ${String(value)}`,
    );
  }
  return value;
}

/** Errors raised before the request could have reached the server. */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "";
}

function isTlsFailure(error: unknown): boolean {
  const code = errorCode(error);
  return (
    code.startsWith("ERR_TLS") ||
    code.startsWith("ERR_SSL") ||
    /CERT|SELF_SIGNED|UNABLE_TO_|LEAF_SIGNATURE|HOSTNAME_MISMATCH/.test(code)
  );
}

export class HttpsRunpodTransport implements RunpodTransport {
  readonly #base: URL;
  readonly #apiKey: SecretString;
  readonly #dispatcher: Dispatcher;
  readonly #headersTimeoutMs: number;
  readonly #bodyTimeoutMs: number;
  readonly #maxResponseBytes: number;
  readonly #userAgent: string;
  readonly #now: () => number;
  readonly #readRetries: number;
  readonly #sleep: (ms: number) => Promise<void>;
  #lastRateLimit: RateLimitState | undefined;
  /** After a 429 with Retry-After: nothing is sent before this (epoch ms, this transport's clock). */
  #closedUntilMs = 0;

  constructor(options: HttpsRunpodTransportOptions) {
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch {
      throw new RangeError(
        `HttpsRunpodTransport option baseUrl: not a URL: ${JSON.stringify(options.baseUrl)}`,
      );
    }
    if (base.protocol !== "https:") {
      throw new RangeError(
        "HttpsRunpodTransport option baseUrl: must be https:// (certificates are always verified)",
      );
    }
    const path = base.pathname.replace(/\/+$/, "");
    base.pathname = path.endsWith("/v2") ? path : `${path}/v2`;
    this.#base = base;
    this.#apiKey = options.apiKey;
    const extra =
      options.extraCaPem === undefined
        ? []
        : typeof options.extraCaPem === "string"
          ? [options.extraCaPem]
          : [...options.extraCaPem];
    this.#dispatcher = new Agent({
      connect: {
        timeout: checkedMs("connectTimeoutMs", options.connectTimeoutMs, 10_000),
        rejectUnauthorized: true,
        ...(extra.length > 0 ? { ca: [...rootCertificates, ...extra] } : {}),
      },
    });
    this.#headersTimeoutMs = checkedMs("headersTimeoutMs", options.headersTimeoutMs, 30_000);
    this.#bodyTimeoutMs = checkedMs("bodyTimeoutMs", options.bodyTimeoutMs, 30_000);
    this.#maxResponseBytes = options.maxResponseBytes ?? 16 * 1024 * 1024;
    this.#userAgent = options.userAgent ?? "pair-runpod/0.1";
    this.#now = options.now ?? Date.now;
    const retries = options.readRetries ?? 2;
    if (!Number.isInteger(retries) || retries < 0 || retries > 10)
      throw new RangeError(
        `HttpsRunpodTransport option readRetries: expected an integer in [0, 10], got ${String(retries)}`,
      );
    this.#readRetries = retries;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  lastRateLimit(): RateLimitState | undefined {
    return this.#lastRateLimit;
  }

  /** Closes the connection pool. */
  async close(): Promise<void> {
    await this.#dispatcher.close();
  }

  async createPod(body: CreatePodRequest, options: CallOptions = {}): Promise<Pod> {
    const answer = await this.#call("createPod", "POST", "/pods", body, options);
    return this.#parsed("createPod", () => parsePod(answer.json));
  }

  async listPods(options: CallOptions = {}): Promise<Pod[]> {
    const answer = await this.#call("listPods", "GET", "/pods", undefined, options);
    return this.#parsed("listPods", () => parsePodList(answer.json));
  }

  async getPod(podId: string, options: CallOptions = {}): Promise<Pod | undefined> {
    const answer = await this.#call(
      "getPod",
      "GET",
      `/pods/${encodeURIComponent(podId)}`,
      undefined,
      options,
      [404],
    );
    if (answer.status === 404) return undefined;
    return this.#parsed("getPod", () => parsePod(answer.json));
  }

  async podAction(podId: string, action: PodAction, options: CallOptions = {}): Promise<Pod | undefined> {
    const answer = await this.#call(
      "podAction",
      "POST",
      `/pods/${encodeURIComponent(podId)}/action`,
      { action },
      options,
    );
    // terminate answers 204; a 200 without a body is accepted too (v1 clients saw both).
    if (answer.status === 204 || answer.json === undefined) return undefined;
    return this.#parsed("podAction", () => parsePod(answer.json));
  }

  async deletePod(podId: string, options: CallOptions = {}): Promise<"deleted" | "not_found"> {
    const answer = await this.#call(
      "deletePod",
      "DELETE",
      `/pods/${encodeURIComponent(podId)}`,
      undefined,
      options,
      [404],
    );
    return answer.status === 404 ? "not_found" : "deleted";
  }

  async listGpuCatalog(options: CallOptions = {}): Promise<GpuCatalogEntry[]> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const answer = await this.#call(
          "listGpuCatalog",
          "GET",
          "/catalog/gpus?include=AVAILABILITY&product=POD",
          undefined,
          options,
        );
        return this.#parsed("listGpuCatalog", () => parseGpuCatalog(answer.json));
      } catch (error) {
        const retry =
          error instanceof RunpodApiError &&
          error.retryable &&
          attempt <= this.#readRetries &&
          options.signal?.aborted !== true;
        if (!retry) throw error;
        await this.#sleep(retryDelayMs(attempt, error));
      }
    }
  }

  #parsed<T>(operation: RunpodOperation, parse: () => T): T {
    try {
      return parse();
    } catch (error) {
      if (!(error instanceof WireShapeError)) throw error;
      throw new RunpodApiError({
        kind: "protocol",
        operation,
        message: `runpod ${operation}: ${error.message}`,
        cause: error,
      });
    }
  }

  async #call(
    operation: RunpodOperation,
    method: "GET" | "POST" | "DELETE",
    path: string,
    body: unknown,
    options: CallOptions,
    expectedErrors: readonly number[] = [],
  ): Promise<{ status: number; json: unknown }> {
    const closedForMs = this.#closedUntilMs - this.#now();
    if (closedForMs > 0)
      throw new RunpodApiError({
        kind: "rate_limited",
        operation,
        message:
          `runpod ${operation}: not sent: Runpod asked for no requests for another ` +
          `${Math.ceil(closedForMs / 1000)} s (retry-after)`,
        retryAfterMs: closedForMs,
      });
    const url = new URL(this.#base.pathname + path, this.#base);
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#apiKey.reveal()}`,
      accept: "application/json, application/problem+json",
      "user-agent": this.#userAgent,
    };
    if (body !== undefined) headers["content-type"] = "application/json";
    let status: number;
    let text: string;
    let responseHeaders: Record<string, string | string[] | undefined>;
    try {
      const response = await request(url, {
        method,
        headers,
        dispatcher: this.#dispatcher,
        headersTimeout: this.#headersTimeoutMs,
        bodyTimeout: this.#bodyTimeoutMs,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      status = response.statusCode;
      responseHeaders = response.headers;
      text = await this.#readText(operation, response.body);
    } catch (error) {
      if (error instanceof RunpodApiError) throw error;
      throw this.#transportFailure(operation, error);
    }
    const header = (name: string): string | undefined => {
      const value = responseHeaders[name];
      return Array.isArray(value) ? value.join(", ") : value;
    };
    const rateLimit = parseRateLimit(header("ratelimit"), header("ratelimit-policy"));
    if (rateLimit) this.#lastRateLimit = rateLimit;
    if ((status >= 200 && status < 300) || expectedErrors.includes(status)) {
      if (text.trim() === "" || expectedErrors.includes(status)) return { status, json: undefined };
      try {
        return { status, json: JSON.parse(text) as unknown };
      } catch (error) {
        throw new RunpodApiError({
          kind: operation === "createPod" ? "uncertain" : "protocol",
          operation,
          status,
          message: `runpod ${operation}: HTTP ${status} with a body that is not JSON`,
          cause: error,
        });
      }
    }
    const problem = parseProblem(text);
    const kind = kindOfAnswer(operation, status, problem);
    const retryAfterMs = parseRetryAfterMs(header("retry-after"), this.#now());
    if (status === 429 && retryAfterMs !== undefined)
      this.#closedUntilMs = Math.max(this.#closedUntilMs, this.#now() + retryAfterMs);
    const summary = [problem.title, problem.detail]
      .filter((part) => part !== undefined && part !== "")
      .join(": ");
    throw new RunpodApiError({
      kind,
      operation,
      status,
      problem,
      message: `runpod ${operation}: HTTP ${status}${summary ? ` ${summary}` : ""}${hint(kind)}`,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      ...(rateLimit ? { rateLimit } : {}),
    });
  }

  async #readText(operation: RunpodOperation, body: Dispatcher.ResponseData["body"]): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      size += buffer.length;
      if (size > this.#maxResponseBytes) {
        body.destroy();
        throw new RunpodApiError({
          kind: operation === "createPod" ? "uncertain" : "protocol",
          operation,
          message: `runpod ${operation}: response larger than ${this.#maxResponseBytes} bytes`,
        });
      }
      chunks.push(buffer);
    }
    return Buffer.concat(chunks).toString("utf8");
  }

  #transportFailure(operation: RunpodOperation, error: unknown): RunpodApiError {
    const code = errorCode(error);
    const cause = error instanceof Error ? error : new Error(String(error));
    const sent = !NOT_SENT_CODES.has(code);
    let kind: RunpodErrorKind;
    if (isTlsFailure(error) || isTlsFailure(cause.cause)) kind = "tls";
    else if (!sent) kind = "network";
    else if (operation === "createPod") kind = "uncertain";
    else if (
      error instanceof undiciErrors.HeadersTimeoutError ||
      error instanceof undiciErrors.BodyTimeoutError
    )
      kind = "timeout";
    else kind = "network";
    const what = code ? `${code}: ${cause.message}` : cause.message;
    return new RunpodApiError({
      kind,
      operation,
      message: `runpod ${operation}: ${what}${hint(kind)}`,
      cause: error,
    });
  }
}

function hint(kind: RunpodErrorKind): string {
  switch (kind) {
    case "uncertain":
      return " — the pod may exist and bill: list pods by name to reconcile; do not retry the create";
    case "unauthorized":
      return " — check the Runpod API key";
    case "tls":
      return " — the certificate was not trusted; add the right CA, verification cannot be turned off";
    case "no_capacity":
      return " — no GPU of this type is free: try the next declared GPU type or later";
    case "insufficient_funds":
      return " — add funds to the Runpod account";
    case "rate_limited":
      return " — wait for Retry-After";
    default:
      return "";
  }
}
