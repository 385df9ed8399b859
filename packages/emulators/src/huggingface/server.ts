/**
 * `startHuggingFaceEmulator`: one loopback HTTPS server playing every Hugging Face service PAIR
 * talks to — the Inference Endpoints control plane (`/v2/...`), the hub (`/api/whoami-v2`), the
 * endpoint catalog (`/api/catalog/...`), each endpoint's data plane (`/endpoints/{label}`) and the
 * Inference Providers router (`/router/v1`), and Hugging Face Jobs (`/api/jobs/...` and the
 * exposed-port proxy `/jobs-proxy/...`, huggingface-jobs/) — over one virtual clock, one billing meter and one
 * set of fault switches. Dispatch, body reading, the lost-answer / 5xx / 429 faults and the log of
 * control requests received (`controlRequests()`) live here.
 * Must not know: endpoint lifecycle rules (world.ts), wire shapes (hf-wire.ts).
 */

import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Socket } from "node:net";
import { createEngineHandler, type EngineHandler } from "../engine/handler.js";
import type { EngineStats } from "../engine/engine-stats.js";
import { BillingMeter } from "./billing-meter.js";
import { ControlFaults, type ControlDecision } from "./control-faults.js";
import {
  controlReply,
  errorReply,
  isControlPath,
  type ControlContext,
  type Reply,
} from "./control-routes.js";
import { DataPlane } from "./data-plane.js";
import { EmulatorTime } from "./emulator-time.js";
import type { EndpointState } from "./endpoint-states.js";
import { endpointUrl } from "./hf-wire.js";
import { imageOf } from "./inference-toolkit.js";
import { handleRouter } from "./inference-router.js";
import { resolveHfOptions, type HuggingFaceEmulatorOptions } from "./options.js";
import { TokenRegistry, type TokenGrant } from "./tokens.js";
import { HuggingFaceWorld, type EndpointRecord } from "./world.js";
import { HuggingFaceJobsService, type JobsEmulator } from "../huggingface-jobs/jobs-service.js";

const MAX_BODY_BYTES = 1024 * 1024;

/** What a test may inspect of one endpoint (no secrets). */
export interface EndpointView {
  readonly namespace: string;
  readonly name: string;
  readonly state: EndpointState;
  readonly message: string;
  readonly type: string;
  readonly createdAt: string;
  /** `model.image` as stored (`{huggingface: {}}` when none was sent): decides whether `/v1` is served. */
  readonly image: unknown;
  /** The data-plane URL (also while status.url is not reported). */
  readonly url: string;
  readonly minReplica: number;
  readonly scaleToZeroTimeout: number | undefined;
  readonly inFlight: number;
  /** Requests held by X-Scale-Up-Timeout, waiting for a replica. */
  readonly heldRequests: number;
  readonly engine: EngineStats;
}

export interface ControlRequestSeen {
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

export interface HuggingFaceEmulator {
  /** `endpoints_api` (no version; clients append `/v2`). */
  readonly endpointsApiUrl: string;
  /** `hub_api` (whoami at `/api/whoami-v2`). */
  readonly hubApiUrl: string;
  /** Catalog base (`/repo-list`, `/deploy` below it). */
  readonly catalogApiUrl: string;
  /** OpenAI base URL of the Inference Providers router (ends in `/v1`). */
  readonly routerUrl: string;
  readonly port: number;
  /** Virtual wall time now, epoch ms. */
  nowMs(): number;
  /** Moves virtual time and applies everything due (transitions, idle scale-to-zero, held requests). */
  advance(ms: number): void;
  readonly meter: BillingMeter;
  readonly faults: ControlFaults;
  /**
   * Every control-plane request received (endpoints API, hub, catalog), oldest first, the last
   * 10,000 at most: for tests that count what a client sent (e.g. within a retry-after window).
   */
  controlRequests(): readonly ControlRequestSeen[];
  readonly tokens: { add(token: string, grant: TokenGrant): void; remove(token: string): void };
  /** Hugging Face Jobs on the hub host (`/api/jobs/...`, exposed ports under `/jobs-proxy/`). */
  readonly jobs: JobsEmulator;
  readonly endpoints: {
    list(namespace?: string): EndpointView[];
    get(namespace: string, name: string): EndpointView | undefined;
    heldRequests(namespace?: string, name?: string): number;
  };
  /** Stops listening, ends every request and connection at once. Idempotent. */
  close(): Promise<void>;
}

function readJsonBody(
  req: IncomingMessage,
): Promise<{ ok: true; value: unknown } | { ok: false; message: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.once("error", () => resolve({ ok: false, message: "request aborted" }));
    req.once("end", () => {
      if (size > MAX_BODY_BYTES)
        return resolve({ ok: false, message: `body larger than ${MAX_BODY_BYTES} bytes` });
      const text = Buffer.concat(chunks).toString("utf8");
      if (text.trim() === "") return resolve({ ok: true, value: undefined });
      try {
        resolve({ ok: true, value: JSON.parse(text) as unknown });
      } catch (error) {
        resolve({ ok: false, message: error instanceof Error ? error.message : String(error) });
      }
    });
  });
}

function send(res: ServerResponse, reply: Reply): void {
  const text = JSON.stringify(reply.body);
  res.statusCode = reply.status;
  res.setHeader("content-type", "application/json");
  res.setHeader("content-length", Buffer.byteLength(text));
  res.end(text);
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

export async function startHuggingFaceEmulator(
  options: HuggingFaceEmulatorOptions = {},
): Promise<HuggingFaceEmulator> {
  const resolved = resolveHfOptions(options);
  const time = new EmulatorTime(resolved.startMs, resolved.timeScale);
  const engineClock = { now: () => ({ wallMs: time.nowMs(), monoMs: performance.now() }) };
  const meter = new BillingMeter(() => time.nowMs());
  const faults = new ControlFaults();
  const tokens = new TokenRegistry();
  for (const [token, grant] of Object.entries(resolved.tokens)) tokens.add(token, grant);
  const pacing = { tokenDelayMs: resolved.tokenDelayMs, firstTokenDelayMs: resolved.firstTokenDelayMs };
  const makeEngine = (repository: string): EngineHandler =>
    createEngineHandler({
      api: "openai",
      name: "vllm-emulator",
      models: [{ name: repository, maxTokens: resolved.maxTokens }],
      clock: engineClock,
      ...pacing,
    });
  const world = new HuggingFaceWorld({
    time,
    timings: resolved.timings,
    hardware: resolved.hardware,
    faults,
    meter,
    seed: resolved.seed,
    makeEngine,
  });
  const dataPlane = new DataPlane(world, tokens, time);
  const jobs = new HuggingFaceJobsService({
    time,
    tokens,
    baseUrl: () => baseUrl,
    makeEngine,
    options: resolved.jobs,
  });
  const prices = new Map(resolved.routerModels.map((model) => [model.id, model]));
  const router = createEngineHandler({
    api: "openai",
    name: "hf-router-emulator",
    models: resolved.routerModels.map((model) => ({ name: model.id, maxTokens: resolved.maxTokens })),
    clock: engineClock,
    ...pacing,
    onUsage: (usage, request) => {
      const account = tokens.fromHeaders(request.headers);
      const price = prices.get(usage.model);
      if (!account || !price) return;
      meter.chargeTokens({
        namespace: account.namespace,
        model: usage.model,
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        // USD per million tokens is micro-USD per token.
        microUsd:
          usage.promptTokens * price.inputPerMillion + usage.completionTokens * price.outputPerMillion,
      });
    },
  });

  let baseUrl = "";
  let serial = 0;
  let requestIds = 0;
  const ctx: ControlContext = {
    world,
    tokens,
    hardware: resolved.hardware,
    catalog: resolved.catalog,
    baseUrl: () => baseUrl,
    nextSerial: () => ++serial,
    hiddenFromListing: () => faults.takeHiddenFromListing(),
  };
  const seen: ControlRequestSeen[] = [];

  const control = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    const method = req.method ?? "GET";
    res.setHeader("x-request-id", `emu-${++requestIds}`);
    const decision = faults.decide(method, path);
    seen.push({ method, path, atMs: time.nowMs(), atRealMs: performance.now(), fault: decision.kind });
    if (seen.length > MAX_REQUESTS_SEEN) seen.splice(0, seen.length - MAX_REQUESTS_SEEN);
    if (decision.kind === "rate-limit") {
      req.resume();
      res.setHeader("retry-after", String(decision.retryAfterS));
      res.setHeader("ratelimit", `"api";r=0;t=${decision.retryAfterS}`);
      res.setHeader("ratelimit-policy", `"fixed window";"api";q=1000;w=300`);
      return send(
        res,
        errorReply(429, `Too Many Requests: rate limit reached; retry after ${decision.retryAfterS} s`),
      );
    }
    if (decision.kind === "fail") {
      req.resume();
      return send(
        res,
        errorReply(decision.status, `Internal error (emulated ${decision.status}); nothing was changed`),
      );
    }
    const body = await readJsonBody(req);
    if (decision.kind === "hold") {
      const early =
        decision.applied === "before-answer"
          ? controlReply(ctx, { method, path, headers: req.headers, body })
          : undefined;
      const how = await faults.park();
      world.settle();
      if (how === "drop" && early === undefined) return void req.socket.destroy();
      const reply = early ?? controlReply(ctx, { method, path, headers: req.headers, body });
      if (req.socket.destroyed) return; // the client went away: carried out, never answered
      return send(res, reply);
    }
    const reply = controlReply(ctx, { method, path, headers: req.headers, body });
    if (decision.kind === "lose") {
      // The action was carried out; the answer never arrives.
      req.socket.destroy();
      return;
    }
    send(res, reply);
  };

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? "/";
    const cut = url.indexOf("?");
    const path = cut >= 0 ? url.slice(0, cut) : url;
    const query = cut >= 0 ? url.slice(cut) : "";
    res.setHeader("server", "huggingface-emulator");
    try {
      world.settle();
      jobs.world.settle();
      if (jobs.handle(req, res, path, query)) return;
      if (path.startsWith("/endpoints/")) return dataPlane.handle(req, res, path, query);
      if (path.startsWith("/router/"))
        return handleRouter(
          router,
          resolved.routerModels,
          req,
          res,
          path,
          tokens.fromHeaders(req.headers) !== undefined,
        );
      if (isControlPath(path)) {
        control(req, res, path).catch((error: unknown) => {
          if (res.headersSent) res.destroy();
          else
            send(
              res,
              errorReply(
                500,
                `huggingface emulator: ${error instanceof Error ? error.message : String(error)}`,
              ),
            );
        });
        return;
      }
      send(res, errorReply(404, "Not Found"));
    } catch (error) {
      if (res.headersSent) res.destroy();
      else
        send(
          res,
          errorReply(500, `huggingface emulator: ${error instanceof Error ? error.message : String(error)}`),
        );
    }
  };

  const server: Server = resolved.tls
    ? createHttpsServer({ key: resolved.tls.key, cert: resolved.tls.cert }, handler)
    : createHttpServer(handler);
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await listen(server, resolved.port);
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : resolved.port;
  baseUrl = `${resolved.tls ? "https" : "http"}://127.0.0.1:${port}`;
  const ticker = time.scaled
    ? setInterval(() => {
        world.settle();
        jobs.world.settle();
      }, 20)
    : undefined;
  ticker?.unref();

  const view = (record: EndpointRecord): EndpointView => ({
    namespace: record.namespace,
    name: record.config.name,
    state: record.state,
    message: record.message,
    type: record.config.type,
    createdAt: record.createdAt,
    image: imageOf(record.config.json),
    url: endpointUrl(baseUrl, record),
    minReplica: record.config.minReplica,
    scaleToZeroTimeout: record.config.scaleToZeroTimeout,
    inFlight: record.inFlight,
    heldRequests: dataPlane.heldCount(record.namespace, record.config.name),
    engine: record.engine.stats(),
  });

  let closed = false;
  return {
    endpointsApiUrl: baseUrl,
    hubApiUrl: baseUrl,
    catalogApiUrl: `${baseUrl}/api/catalog`,
    routerUrl: `${baseUrl}/router/v1`,
    port,
    nowMs: () => time.nowMs(),
    advance: (ms) => {
      time.advance(ms);
      world.settle();
      jobs.world.settle();
    },
    meter,
    faults,
    controlRequests: () => [...seen],
    tokens: { add: (token, grant) => tokens.add(token, grant), remove: (token) => tokens.remove(token) },
    jobs: jobs.api,
    endpoints: {
      list: (namespace) =>
        world
          .all()
          .filter((record) => namespace === undefined || record.namespace === namespace)
          .map(view),
      get: (namespace, name) => {
        const record = world.get(namespace, name);
        return record ? view(record) : undefined;
      },
      heldRequests: (namespace, name) => dataPlane.heldCount(namespace, name),
    },
    close: async () => {
      if (closed) return;
      closed = true;
      if (ticker) clearInterval(ticker);
      for (const record of world.all()) record.engine.close();
      jobs.close();
      router.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}
