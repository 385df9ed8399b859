/**
 * The HTTPS implementation of EndpointsTransport, on undici: every base URL configurable
 * (`endpoints_api`, `hub_api`, catalog), certificate verification always on (an extra CA may be
 * added to the system roots, nothing can turn checks off), connect/response timeouts, the bearer
 * token revealed only into the outgoing header, and the retry policy applied per call; a 429's
 * retry-after closes a gate (optionally shared by every client of the account) that holds every
 * other call unsent until it opens.
 * Must not know: PAIR's lifecycle or state mapping, where the token is stored.
 */

import { rootCertificates } from "node:tls";
import { Agent, request } from "undici";
import type { EndpointsTransport } from "./endpoints-transport.js";
import { HuggingFaceApiError, isAlreadyRunning, kindOfStatus, providerMessageOf } from "./errors.js";
import type {
  HfAccount,
  HfCatalogDeploy,
  HfComputeOffer,
  HfEndpoint,
  HfEndpointSpec,
  HfEndpointUpdate,
} from "./model.js";
import {
  DEFAULT_RETRY_POLICY,
  decideRetry,
  parseRetryAfter,
  validateRetryPolicy,
  type RetryPolicy,
} from "./retry-policy.js";
import { RetryAfterGate } from "./retry-after-gate.js";
import type { RevealableToken } from "./secret-token.js";
import {
  readCatalogDeploy,
  readCatalogRepoList,
  readEndpoint,
  readEndpointList,
  readProviderListing,
  readWhoami,
  WireShapeError,
} from "./wire.js";
import { toAccount, toCreateBody, toEndpoint, toOffers, toUpdateBody } from "./wire-mapping.js";

export const DEFAULT_ENDPOINTS_API = "https://api.endpoints.huggingface.cloud";
export const DEFAULT_HUB_API = "https://huggingface.co";
export const DEFAULT_CATALOG_API = "https://endpoints.huggingface.co/api/catalog";

export interface HttpsTransportOptions {
  readonly token: RevealableToken;
  /** Without the version (the transport appends `/v2`). Default api.endpoints.huggingface.cloud. */
  readonly endpointsApi?: string;
  readonly hubApi?: string;
  readonly catalogApi?: string;
  /** One more CA (PEM) trusted besides the system roots, e.g. a test CA. Verification stays on. */
  readonly extraCaPem?: string;
  /** Default 10 s. */
  readonly connectTimeoutMs?: number;
  /** Time for the response headers, and then between body chunks. Default 30 s. */
  readonly responseTimeoutMs?: number;
  readonly retry?: Partial<RetryPolicy>;
  /**
   * A retry-after window shared with other clients of the same account (default: this client's
   * own). While a 429's window is open nothing is sent: the refused call waits it out, any other
   * fails `rate_limited` at once.
   */
  readonly gate?: RetryAfterGate;
  /** Seams for tests: waiting between attempts, jitter, wall time (for HTTP-date retry-after). */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
  readonly nowMs?: () => number;
}

/** A refused transport option; `code` is stable (`insecure_url`, `invalid_option`). */
export class HfTransportOptionError extends Error {
  constructor(
    readonly code: "insecure_url" | "invalid_option",
    message: string,
  ) {
    super(message);
    this.name = "HfTransportOptionError";
  }
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** An https URL, or http to a loopback host only; without a trailing slash. */
export function baseUrl(option: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new HfTransportOptionError("invalid_option", `${option}: "${value}" is not a URL`);
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK.has(url.hostname)))
    throw new HfTransportOptionError(
      "insecure_url",
      `${option}: ${url.protocol}// is refused for ${url.hostname}; use https:// (http is allowed for loopback only)`,
    );
  return value.replace(/\/+$/, "");
}

export function boundedMs(option: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > 3_600_000)
    throw new HfTransportOptionError(
      "invalid_option",
      `${option}: expected an integer in [1, 3600000] ms, got ${value}`,
    );
  return value;
}

const NOT_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);
const CERTIFICATE =
  /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ERR_TLS_CERT_ALTNAME_INVALID|DEPTH_ZERO|HOSTNAME_MISMATCH/;

/** Network failure classes: a certificate failure or a refused connection never reached HF. */
export function classify(error: unknown): { certificate: boolean; sent: boolean; detail: string } {
  const codes: string[] = [];
  let message = "";
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") codes.push(code);
    message ||= e.message;
  }
  const certificate = codes.some((code) => CERTIFICATE.test(code)) || /certificate/i.test(message);
  const sent = !certificate && !codes.some((code) => NOT_SENT.has(code));
  return { certificate, sent, detail: `${codes[0] ?? "network error"}: ${message}` };
}

interface CallSpec<T> {
  readonly operation: string;
  readonly method: "GET" | "POST" | "PUT" | "DELETE";
  readonly url: string;
  readonly body?: unknown;
  readonly idempotent: boolean;
  readonly read: (json: unknown) => T;
  /** For delete: a 404 after an attempt whose answer was lost means the first attempt did it. */
  readonly absentAfterLoss?: T;
}

const enc = encodeURIComponent;

export class HttpsEndpointsTransport implements EndpointsTransport {
  readonly #token: RevealableToken;
  readonly #endpoints: string;
  readonly #hub: string;
  readonly #catalog: string;
  readonly #agent: Agent;
  readonly #policy: RetryPolicy;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;
  readonly #now: () => number;
  readonly #gate: RetryAfterGate;

  constructor(options: HttpsTransportOptions) {
    if (typeof options.token?.reveal !== "function")
      throw new HfTransportOptionError("invalid_option", "token: expected an object with reveal()");
    this.#token = options.token;
    this.#endpoints = baseUrl("endpoints_api", options.endpointsApi ?? DEFAULT_ENDPOINTS_API);
    this.#hub = baseUrl("hub_api", options.hubApi ?? DEFAULT_HUB_API);
    this.#catalog = baseUrl("catalog_api", options.catalogApi ?? DEFAULT_CATALOG_API);
    this.#policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    const problems = validateRetryPolicy(this.#policy);
    if (problems.length > 0)
      throw new HfTransportOptionError("invalid_option", `retry: ${problems.join("; ")}`);
    const responseTimeoutMs = boundedMs("responseTimeoutMs", options.responseTimeoutMs, 30_000);
    this.#agent = new Agent({
      connect: {
        // Passing `ca` replaces the defaults: keep the system roots and add the extra CA.
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
    return `HttpsEndpointsTransport(${this.#endpoints})`;
  }

  async #call<T>(spec: CallSpec<T>): Promise<T> {
    let lost = false;
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
        lost ||= failure.sent;
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
      if (status >= 200 && status < 300) return this.#read(spec, text, status, requestId);
      if (status === 404 && lost && spec.absentAfterLoss !== undefined) return spec.absentAfterLoss;
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
      const kind = !spec.idempotent && status >= 500 ? "uncertain" : kindOfStatus(status);
      throw new HuggingFaceApiError({
        kind,
        operation: spec.operation,
        status,
        providerMessage: providerMessageOf(text),
        requestId,
        retryAfterMs,
        responseText: text,
      });
    }
  }

  #read<T>(spec: CallSpec<T>, text: string, status: number, requestId: string | undefined): T {
    try {
      return spec.read(text.trim() === "" ? undefined : (JSON.parse(text) as unknown));
    } catch (error) {
      const detail = error instanceof WireShapeError ? error.message : `not JSON (${text.slice(0, 80)})`;
      // A create that succeeded but cannot be read still happened: the caller must list.
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

  #endpointUrl(namespace: string, name?: string, action?: string): string {
    const base = `${this.#endpoints}/v2/endpoint/${enc(namespace)}`;
    return name === undefined ? base : `${base}/${enc(name)}${action === undefined ? "" : `/${action}`}`;
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

  listEndpoints(namespace: string): Promise<HfEndpoint[]> {
    return this.#call({
      operation: `listEndpoints ${namespace}`,
      method: "GET",
      url: this.#endpointUrl(namespace),
      idempotent: true,
      read: (json) => readEndpointList(json).items.map((item) => toEndpoint(namespace, item)),
    });
  }

  getEndpoint(namespace: string, name: string): Promise<HfEndpoint> {
    return this.#call({
      operation: `getEndpoint ${namespace}/${name}`,
      method: "GET",
      url: this.#endpointUrl(namespace, name),
      idempotent: true,
      read: (json) => toEndpoint(namespace, readEndpoint(json)),
    });
  }

  createEndpoint(namespace: string, spec: HfEndpointSpec): Promise<HfEndpoint> {
    return this.#call({
      operation: `createEndpoint ${namespace}/${spec.name}`,
      method: "POST",
      url: this.#endpointUrl(namespace),
      body: toCreateBody(spec),
      idempotent: false,
      read: (json) => toEndpoint(namespace, readEndpoint(json)),
    });
  }

  updateEndpoint(namespace: string, name: string, update: HfEndpointUpdate): Promise<HfEndpoint> {
    return this.#call({
      operation: `updateEndpoint ${namespace}/${name}`,
      method: "PUT",
      url: this.#endpointUrl(namespace, name),
      body: toUpdateBody(update),
      idempotent: false,
      read: (json) => toEndpoint(namespace, readEndpoint(json)),
    });
  }

  #action(
    namespace: string,
    name: string,
    action: "pause" | "resume" | "scale-to-zero",
  ): Promise<HfEndpoint> {
    return this.#call({
      operation: `${action} ${namespace}/${name}`,
      method: "POST",
      url: this.#endpointUrl(namespace, name, action),
      idempotent: true,
      read: (json) => toEndpoint(namespace, readEndpoint(json)),
    });
  }

  pause(namespace: string, name: string): Promise<HfEndpoint> {
    return this.#action(namespace, name, "pause");
  }

  async resume(namespace: string, name: string): Promise<HfEndpoint> {
    try {
      return await this.#action(namespace, name, "resume");
    } catch (error) {
      // HF answers 400 "... already running" to a resume of a running endpoint (huggingface_hub treats it as success).
      if (error instanceof HuggingFaceApiError && isAlreadyRunning(error.status, error.responseText))
        return this.getEndpoint(namespace, name);
      throw error;
    }
  }

  scaleToZero(namespace: string, name: string): Promise<HfEndpoint> {
    return this.#action(namespace, name, "scale-to-zero");
  }

  deleteEndpoint(namespace: string, name: string): Promise<void> {
    return this.#call<true>({
      operation: `deleteEndpoint ${namespace}/${name}`,
      method: "DELETE",
      url: this.#endpointUrl(namespace, name),
      idempotent: true,
      read: () => true,
      absentAfterLoss: true,
    }).then(() => undefined);
  }

  listProviderCompute(namespace: string): Promise<HfComputeOffer[]> {
    return this.#call({
      operation: `listProviderCompute ${namespace}`,
      method: "GET",
      url: `${this.#endpoints}/v2/provider/${enc(namespace)}`,
      idempotent: true,
      read: (json) => toOffers(readProviderListing(json)),
    });
  }

  catalog(): Promise<string[]> {
    return this.#call({
      operation: "catalog",
      method: "GET",
      url: `${this.#catalog}/repo-list`,
      idempotent: true,
      read: (json) => [...readCatalogRepoList(json).models],
    });
  }

  deployFromCatalog(deploy: HfCatalogDeploy): Promise<HfEndpoint> {
    return this.#call({
      operation: `deployFromCatalog ${deploy.namespace}/${deploy.repoId}`,
      method: "POST",
      url: `${this.#catalog}/deploy`,
      body: {
        namespace: deploy.namespace,
        repoId: deploy.repoId,
        ...(deploy.endpointName === undefined ? {} : { endpointName: deploy.endpointName }),
        ...(deploy.accelerator === undefined ? {} : { accelerator: deploy.accelerator }),
      },
      idempotent: false,
      read: (json) => toEndpoint(deploy.namespace, readCatalogDeploy(json)),
    });
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}

export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
