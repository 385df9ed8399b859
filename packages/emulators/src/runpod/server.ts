/**
 * The Runpod emulator as one loopback HTTPS (or, without TLS, HTTP) server: requests for a pod's
 * proxy (by Host or `/proxy/…` path) go to the pod proxy, everything else to the v2 control plane.
 * Holds the virtual clock, the billing meter, the fault switches and the inspection view, and
 * closes every connection and pod engine at once.
 * Must not know: lifecycle rules, wire shapes (the modules it wires together own them).
 */

import { setMaxListeners } from "node:events";
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Socket } from "node:net";
import { openExchange } from "../engine/http-exchange.js";
import { handleApi, sendProblem, type ApiContext } from "./api-routes.js";
import { BillingMeter, type PodCharges } from "./billing.js";
import { GpuCatalog } from "./catalog.js";
import { FIXED_START_MS, VirtualClock } from "./clock.js";
import { RunpodControlPlane } from "./control-plane.js";
import { CallFaults, faultSwitches, type RunpodFaults } from "./faults.js";
import { resolveRunpodOptions, type RunpodEmulatorOptions } from "./options.js";
import type { PodRecord } from "./pod-record.js";
import { PodProxy, podProxyUrl, proxyTarget } from "./pod-proxy.js";
import { renderPod, type PodWire } from "./pod-wire.js";
import { problem } from "./problem.js";
import { RateLimiter } from "./rate-limit.js";

/** What a test may read about a pod beyond the API: emulator-only facts. */
export interface PodInspection {
  readonly wire: PodWire;
  /** The vLLM server accepts requests now. */
  readonly serving: boolean;
  /** Times the container restarted on its own (crash loop). */
  readonly crashRestarts: number;
  /** The container's environment, secret references expanded. Emulator-only: never sent by the API. */
  readonly containerEnv: Readonly<Record<string, string>>;
  readonly servedModelNames: readonly string[];
  readonly lastStatusChange: string;
}

export interface RunpodMeter {
  /** What the pod has cost so far, micro-USD (terminated pods keep their total). */
  totalMicroUsd(podId: string): number;
  charges(podId: string): PodCharges;
  grandTotalMicroUsd(): number;
}

export interface RunpodRequestSeen {
  readonly method: string;
  readonly path: string;
  /** The emulator's (virtual) clock, epoch ms. */
  readonly atMs: number;
  /** Real monotonic time (`performance.now()`): retry-after waits are real time on the client. */
  readonly atRealMs: number;
  readonly fault: "none" | "fail" | "rate-limit";
}

const MAX_REQUESTS_SEEN = 10_000;

export interface RunpodEmulator {
  /** Origin of the control plane, e.g. "https://127.0.0.1:40123"; clients append "/v2". */
  readonly apiBaseUrl: string;
  readonly port: number;
  /** A pod's proxy base URL by path (`…/proxy/{podId}-{port}`); OpenAI clients append "/v1". */
  proxyUrl(podId: string, port?: number): string;
  /** The emulated provider's clock (ms since the epoch). */
  readonly clock: { now(): number };
  /** Moves the virtual clock forward and applies every transition that fell due. */
  advance(ms: number): void;
  readonly meter: RunpodMeter;
  readonly faults: RunpodFaults;
  /** Every authenticated control-plane call, oldest first (the last 10,000): tests count what was sent. */
  requests(): readonly RunpodRequestSeen[];
  readonly pods: {
    list(): PodInspection[];
    get(podId: string): PodInspection | undefined;
  };
  /** Stops listening, ends every connection and every pod engine. Idempotent. */
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host, exclusive: true }, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

export async function startRunpodEmulator(options: RunpodEmulatorOptions): Promise<RunpodEmulator> {
  const resolved = resolveRunpodOptions(options);
  const clock = new VirtualClock(options.now ?? (() => FIXED_START_MS));
  const catalog = new GpuCatalog(resolved.gpuTypes);
  const meter = new BillingMeter();
  const seen: RunpodRequestSeen[] = [];
  const plane = new RunpodControlPlane(
    {
      timings: resolved.timings,
      secrets: resolved.secrets,
      missingSecret: resolved.missingSecret,
      defaultModel: resolved.defaultModel,
      seed: resolved.seed,
      errorDialect: resolved.errorDialect,
    },
    clock,
    catalog,
    meter,
  );
  const proxy = new PodProxy(plane, clock, { tokenDelayMs: resolved.tokenDelayMs });
  plane.onServingEnded = (podId) => proxy.containerStopped(podId);
  const calls = new CallFaults();
  const ctx: ApiContext = {
    apiKey: resolved.apiKey,
    plane,
    catalog,
    clock,
    limiter: new RateLimiter(resolved.rateLimit),
    calls,
    maxBodyBytes: resolved.maxBodyBytes,
    seen: (method, path, fault) => {
      seen.push({ method, path, atMs: clock.now(), atRealMs: performance.now(), fault });
      if (seen.length > MAX_REQUESTS_SEEN) seen.splice(0, seen.length - MAX_REQUESTS_SEEN);
    },
  };
  const shutdown = new AbortController();
  setMaxListeners(0, shutdown.signal);

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const target = proxyTarget(req.headers.host, req.url ?? "/");
    const work = target
      ? proxy.handle(target, req, res)
      : handleApi(ctx, openExchange(req, res, shutdown.signal));
    work.catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else
        sendProblem(
          res,
          problem(500, `runpod emulator: ${error instanceof Error ? error.message : String(error)}`),
        );
    });
  };
  const server: Server = resolved.tls
    ? createHttpsServer({ key: resolved.tls.key, cert: resolved.tls.cert }, handler)
    : createHttpServer(handler);
  const sockets = new Set<Socket>();
  let closed = false;
  server.on("connection", (socket: Socket) => {
    if (closed) return void socket.destroy();
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await listen(server, resolved.port, resolved.host);
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : resolved.port;
  const origin = `${resolved.tls ? "https" : "http"}://${resolved.host === "::1" ? "[::1]" : resolved.host}:${port}`;

  const inspect = (pod: PodRecord): PodInspection => ({
    wire: renderPod(pod, clock.now()),
    serving: plane.isServing(pod),
    crashRestarts: pod.crashRestarts,
    containerEnv: { ...pod.containerEnv },
    servedModelNames: pod.vllm.servedModelNames,
    lastStatusChange: pod.lastStatusChange,
  });

  return {
    apiBaseUrl: origin,
    port,
    proxyUrl: (podId, podPort = 8000) => podProxyUrl(origin, podId, podPort),
    clock: { now: () => clock.now() },
    advance: (ms) => {
      clock.advance(ms);
      plane.sync();
    },
    meter: {
      totalMicroUsd: (podId) => {
        plane.sync();
        return meter.totalMicroUsd(podId);
      },
      charges: (podId) => {
        plane.sync();
        return meter.charges(podId);
      },
      grandTotalMicroUsd: () => {
        plane.sync();
        return meter.grandTotalMicroUsd();
      },
    },
    faults: faultSwitches(calls, catalog, plane),
    requests: () => [...seen],
    pods: {
      list: () =>
        plane
          .list()
          .map((wire) => plane.record(wire.id))
          .filter((pod): pod is PodRecord => pod !== undefined)
          .map(inspect),
      get: (podId) => {
        const pod = plane.record(podId);
        return pod ? inspect(pod) : undefined;
      },
    },
    close: async () => {
      if (closed) return;
      closed = true;
      shutdown.abort();
      await proxy.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}
