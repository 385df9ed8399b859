/**
 * Readiness of a vLLM pod through its Runpod proxy: `GET {address}/v1/models` with the vLLM key.
 * 200 listing the served model → ready; 401/403 → the pod refuses our key (it was started with
 * another one, or the secret reference was not substituted); anything else, or no connection →
 * not listening yet (the proxy answers 502 while vLLM loads). Certificates are always verified.
 * Must not know: pods' lifecycle, the controller, where the key is stored (it is handed a SecretString).
 */

import { rootCertificates } from "node:tls";
import { Agent, request } from "undici";
import type { SecretString } from "./secret.js";

export type ProbeResult = "ready" | "not-listening" | "key-refused" | "model-missing";

export interface ReadinessProbe {
  probe(address: string, servedModel: string): Promise<ProbeResult>;
}

export interface HttpsVllmProbeOptions {
  /** The vLLM API key, read by the sponsor from the OS credential store. */
  readonly apiKey: SecretString;
  /** CA certificates (PEM) trusted besides the system roots (an emulator's test CA). */
  readonly extraCaPem?: string;
  /** Per probe; default 10 s. */
  readonly timeoutMs?: number;
}

export class HttpsVllmProbe implements ReadinessProbe {
  readonly #apiKey: SecretString;
  readonly #agent: Agent;
  readonly #timeoutMs: number;

  constructor(options: HttpsVllmProbeOptions) {
    const timeoutMs = options.timeoutMs ?? 10_000;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 120_000)
      throw new RangeError(`HttpsVllmProbe timeoutMs: expected an integer in [1, 120000], got ${timeoutMs}`);
    this.#apiKey = options.apiKey;
    this.#timeoutMs = timeoutMs;
    this.#agent = new Agent({
      connect: {
        rejectUnauthorized: true,
        timeout: timeoutMs,
        ...(options.extraCaPem === undefined ? {} : { ca: [...rootCertificates, options.extraCaPem] }),
      },
    });
  }

  async probe(address: string, servedModel: string): Promise<ProbeResult> {
    const url = new URL(`${address.replace(/\/+$/, "")}/v1/models`);
    if (url.protocol !== "https:") return "not-listening";
    try {
      const response = await request(url, {
        method: "GET",
        dispatcher: this.#agent,
        headers: { authorization: `Bearer ${this.#apiKey.reveal()}`, accept: "application/json" },
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
      const text = await response.body.text();
      if (response.statusCode === 401 || response.statusCode === 403) return "key-refused";
      if (response.statusCode !== 200) return "not-listening";
      const body = JSON.parse(text) as { data?: { id?: unknown }[] };
      return Array.isArray(body.data) && body.data.some((m) => m.id === servedModel)
        ? "ready"
        : "model-missing";
    } catch {
      return "not-listening";
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}
