/**
 * The per-pod HTTP proxy (`https://{podId}-{port}.proxy.runpod.net`), addressed by Host header
 * (`{podId}-{port}.proxy.<anything>`) or, for loopback tests, by path
 * (`/proxy/{podId}-{port}/…`). A pod whose vLLM server listens gets the request forwarded to its
 * engine emulator (one per container incarnation, started on first use, closed when the container
 * stops serving, which cuts open streams); otherwise the proxy answers as Runpod's does: 502 while
 * nothing listens (loading, crash loop, stopped), 404 for a port not exposed as `/http` or an
 * unknown pod [I: pages are HTML, their exact text is not emulated].
 * Must not know: the control plane's rules (it asks it), billing, the control-plane API.
 */

import { request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { startEngineEmulator, type EngineEmulator } from "../engine/server.js";
import type { RunpodClock } from "./clock.js";
import type { RunpodControlPlane } from "./control-plane.js";

export interface ProxyTarget {
  readonly podId: string;
  readonly port: number;
  /** Path and query to send to the pod. */
  readonly path: string;
}

const HOST_ROUTE = /^([a-z0-9]+)-(\d{1,5})\.proxy\./i;
const PATH_ROUTE = /^\/proxy\/([a-z0-9]+)-(\d{1,5})(\/.*)?$/i;
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
]);

/** Where a request goes when it is meant for a pod's proxy; undefined for the control plane. */
export function proxyTarget(host: string | undefined, url: string): ProxyTarget | undefined {
  const byHost = HOST_ROUTE.exec(host ?? "");
  if (byHost) return { podId: (byHost[1] ?? "").toLowerCase(), port: Number(byHost[2]), path: url };
  const byPath = PATH_ROUTE.exec(url);
  if (byPath)
    return { podId: (byPath[1] ?? "").toLowerCase(), port: Number(byPath[2]), path: byPath[3] ?? "/" };
  return undefined;
}

/** A pod's proxy base URL on an emulator reached at `origin` (e.g. "https://127.0.0.1:4123"). */
export function podProxyUrl(origin: string, podId: string, port: number): string {
  return `${origin}/proxy/${podId}-${port}`;
}

function sendPage(res: ServerResponse, status: 404 | 502, title: string): void {
  const body = `<!DOCTYPE html><html><head><title>${status} ${title}</title></head><body><h1>${status} ${title}</h1><p>runpod emulator proxy</p></body></html>`;
  res.statusCode = status;
  res.setHeader("content-type", "text/html; charset=utf-8");
  res.setHeader("content-length", Buffer.byteLength(body));
  res.end(body);
}

export interface PodProxyOptions {
  readonly tokenDelayMs: number;
}

interface Incarnation {
  readonly epoch: number;
  readonly engine: Promise<EngineEmulator>;
}

export class PodProxy {
  readonly #plane: RunpodControlPlane;
  readonly #clock: RunpodClock;
  readonly #options: PodProxyOptions;
  readonly #engines = new Map<string, Incarnation>();
  #closed = false;

  constructor(plane: RunpodControlPlane, clock: RunpodClock, options: PodProxyOptions) {
    this.#plane = plane;
    this.#clock = clock;
    this.#options = options;
  }

  /** Closes the engine of a pod whose container stopped serving (open streams are cut). */
  containerStopped(podId: string): void {
    const incarnation = this.#engines.get(podId);
    if (!incarnation) return;
    this.#engines.delete(podId);
    void incarnation.engine.then((engine) => engine.close()).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#engines.values()];
    this.#engines.clear();
    await Promise.all(
      all.map(async (incarnation) => (await incarnation.engine.catch(() => undefined))?.close()),
    );
  }

  async handle(target: ProxyTarget, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const pod = this.#plane.record(target.podId);
    const exposed = pod?.spec.ports.includes(`${target.port}/http`) ?? false;
    if (!pod || !exposed) {
      req.resume();
      return sendPage(res, 404, "Not Found");
    }
    if (this.#closed || !this.#plane.isServing(pod) || target.port !== pod.vllm.port) {
      req.resume();
      return sendPage(res, 502, "Bad Gateway");
    }
    let incarnation = this.#engines.get(pod.id);
    if (!incarnation || incarnation.epoch !== pod.containerEpoch) {
      if (incarnation) this.containerStopped(pod.id);
      const clock = this.#clock;
      incarnation = {
        epoch: pod.containerEpoch,
        engine: startEngineEmulator({
          api: "openai",
          name: "vllm-emulator",
          models: pod.vllm.servedModelNames.map((name) => ({ name, contextTokens: 1 << 20 })),
          tokenDelayMs: this.#options.tokenDelayMs,
          clock: { now: () => ({ wallMs: clock.now(), monoMs: performance.now() }) },
          ...(pod.vllm.apiKeys.length > 0 ? { apiKey: pod.vllm.apiKeys } : {}),
        }),
      };
      this.#engines.set(pod.id, incarnation);
    }
    const engine = await incarnation.engine;
    forward(engine.port, target.path, req, res);
  }
}

/** Relays one request to the engine on loopback, streaming both ways; a failure before headers is 502. */
function forward(port: number, path: string, req: IncomingMessage, res: ServerResponse): void {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
  }
  const upstream = httpRequest(
    { host: "127.0.0.1", port, path, method: req.method ?? "GET", headers },
    (answer) => {
      res.statusCode = answer.statusCode ?? 502;
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name)) res.setHeader(name, value);
      }
      answer.pipe(res);
      answer.once("error", () => res.destroy());
      answer.once("aborted", () => res.destroy());
      answer.once("close", () => {
        if (!answer.complete) res.destroy();
      });
    },
  );
  upstream.once("error", () => {
    if (res.headersSent) res.destroy();
    else sendPage(res, 502, "Bad Gateway");
  });
  res.once("close", () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
}
