/**
 * The core stage: what every other stage stands on. The secret redactor and the log through it, the
 * data dir made private, the API keys (a listen beyond loopback needs one), the admin token, the
 * dashboard's sessions, metrics, the dispatcher to the engines — and the client port, bound first
 * (a second node on the same port fails here, before it touches anything else) and answering 503
 * until the serve stage hands it the routes.
 * Must not know: routes, peers, rented nodes.
 */

import { randomBytes } from "node:crypto";
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { hostname } from "node:os";
import { Agent, type Dispatcher } from "undici";
import { realClock, SYSTEM_RUNTIME, type Runtime } from "@pair/cluster";
import { ensureAdminToken } from "../auth/admin-token.js";
import { ApiKeyVerifier, SOCKET_LOOPBACK_POLICY, type LoopbackPolicy } from "../auth/index.js";
import type { PairConfig } from "../config/index.js";
import { SecretRedactor } from "../credentials/index.js";
import { ensurePrivateDataDir } from "../files/data-dir.js";
import { frontDoorPolicy } from "../http/front-door-policy.js";
import { behindFrontDoor, frontDoor } from "../http/front-door.js";
import { Metrics } from "../observability/metrics.js";
import { UiSessions } from "../ui/index.js";
import type { NodeOptions } from "./node-options.js";
import { ListenError } from "./listen-error.js";
import type { Stage } from "./stage.js";

export const PAIR_VERSION = "0.1.0";

/** Default longest time a client may take to send a request's headers. */
export const CLIENT_HEADERS_TIMEOUT_MS = 30_000;

/** Default most connections open at once on the client port (Node's is unlimited). */
export const CLIENT_MAX_CONNECTIONS = 1_024;

export interface Core extends Stage {
  readonly config: PairConfig;
  /** Every line goes through the redactor first. */
  readonly log: (line: string) => void;
  readonly redactor: SecretRedactor;
  readonly dataDir: string;
  /**
   * One wall clock for what the node records and shows (history, admin times): the managed nodes'
   * clock, which the sandbox runs virtually, so the dashboard never mixes two clocks on one page.
   */
  readonly wallMs: () => number;
  /** The node's clock (`wallMs` reads its wall time) and timers: the one time seam tests replace. */
  readonly runtime: Runtime;
  readonly loopback: LoopbackPolicy;
  readonly beyondLoopback: boolean;
  readonly apiKeys: ApiKeyVerifier;
  readonly adminToken: string;
  readonly uiSessions: UiSessions;
  readonly metrics: Metrics;
  readonly dispatcher: Dispatcher;
  /** The client port's URL (`http://host:port`) and port, as bound. */
  readonly url: string;
  readonly port: number;
  /** From now on the client port's requests go to `handler`. */
  serve(handler: RequestListener): void;
}

const STARTING: RequestListener = (_req, res) => {
  res.writeHead(503, { "retry-after": "1", "content-type": "text/plain" });
  res.end("PAIR is starting\n");
};

export async function startCore(options: NodeOptions): Promise<Core> {
  const { config } = options;
  const runtime = options.seams?.runtime ?? SYSTEM_RUNTIME;
  const wallMs = () => runtime.clock.now().wallMs;
  // Every secret the node reads or sends is known here, and scrubbed from what leaves the process.
  const redactor = new SecretRedactor();
  const rawLog = options.seams?.log;
  const log = rawLog === undefined ? () => undefined : (line: string) => rawLog(redactor.redact(line));
  const dataDir = config.node.dataDir;
  const loopback = options.seams?.loopback ?? SOCKET_LOOPBACK_POLICY;
  ensurePrivateDataDir(dataDir);
  // Reads <data_dir>/api-keys.json (throws ApiKeyError if it is unreadable or others may write it).
  const apiKeys = new ApiKeyVerifier({
    dataDir,
    onError: (error) => log(`API keys: ${error.message} — no API key is accepted until this is fixed`),
  });
  const beyondLoopback = !loopback.isLoopbackHost(config.node.listen.host);
  if (beyondLoopback && apiKeys.activeIds().length === 0)
    throw new ListenError(
      "auth_required",
      `node.listen ${config.node.listen.host}: auth_required: this address is beyond loopback, so callers ` +
        `from other machines must send an API key, and ${dataDir} holds no active one: create one with ` +
        "`pair apikey create ID` (with the same --config), or listen on 127.0.0.1",
    );
  if (config.node.apiKeys.length > 0)
    log(
      "node.api_keys in the config is not used: API keys live hashed in the data dir " +
        "(`pair apikey create ID`, `pair apikey list`)",
    );
  const adminToken = ensureAdminToken(dataDir);
  redactor.add(adminToken);
  const uiSessions = new UiSessions({ clock: realClock(runtime), randomBytes: (n) => randomBytes(n) });
  const metrics = new Metrics();
  let handler = STARTING;
  const { server, sockets } = clientServer(options, { metrics, loopback, beyondLoopback, log }, (req, res) =>
    handler(req, res),
  );
  const host = config.node.listen.host;
  const port = await listen(server, host, options.overrides?.port ?? config.node.listen.port);
  const dispatcher =
    options.seams?.dispatcher ??
    new Agent({ keepAliveTimeout: 10_000, connections: 256, connect: { timeout: 5_000 } });
  let closed: Promise<void> | undefined;
  return {
    name: "core",
    config,
    log,
    redactor,
    dataDir,
    wallMs,
    runtime,
    loopback,
    beyondLoopback,
    apiKeys,
    adminToken,
    uiSessions,
    metrics,
    dispatcher,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    serve: (next) => {
      handler = next;
    },
    // Last of the quiesce: peers were told first. The idle connections close now.
    quiesce: () => {
      closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
    },
    // After the grace (local's drain waited for the requests in flight): the rest are cut.
    drain: async () => {
      for (const s of sockets) s.destroy();
      await closed;
    },
    release: async () => {
      if (options.seams?.dispatcher === undefined) await dispatcher.close();
    },
  };
}

/** The client port's server: `route` behind the front door (Host, Origin), with its bounds. Not listening. */
function clientServer(
  options: NodeOptions,
  core: { metrics: Metrics; loopback: LoopbackPolicy; beyondLoopback: boolean; log: (line: string) => void },
  route: RequestListener,
): { server: Server; sockets: Set<Socket> } {
  const { loopback } = core;
  const headersTimeoutMs = options.overrides?.headersTimeoutMs ?? CLIENT_HEADERS_TIMEOUT_MS;
  const door = frontDoorPolicy({
    node: options.config.node,
    listenIsLoopback: !core.beyondLoopback,
    hostName: options.seams?.hostName ?? hostname(),
    env: options.seams?.env ?? process.env,
    log: core.log,
  });
  const server: Server = createServer(
    // How often Node looks for connections over the headers bound (its default, 30 s, doubled it).
    { connectionsCheckingInterval: Math.min(1_000, headersTimeoutMs) },
    behindFrontDoor(
      frontDoor(door),
      (address) => loopback.isLoopbackPeer(address),
      route,
      (code) =>
        core.metrics.inc(
          "pair_front_door_refusals_total",
          "Requests refused by Host or Origin before any route.",
          { code },
        ),
    ),
  );
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = 0; // streams may last long; the scheduler and first-byte timeouts bound the rest
  // A flood of idle connections stops at this many; Node closes the next ones on arrival.
  server.maxConnections = options.overrides?.maxConnections ?? CLIENT_MAX_CONNECTIONS;
  const sockets = new Set<Socket>();
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  return { server, sockets };
}

/** Listens on `host:port`; resolves the port bound. A taken or refused address is a ListenError. */
function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once("error", (e: NodeJS.ErrnoException) => {
      reject(
        e.code === "EADDRINUSE"
          ? new ListenError(
              "port_in_use",
              `${host}:${port} is already in use — most often by Ollama itself. Move Ollama to another port ` +
                `(OLLAMA_HOST=127.0.0.1:11435 ollama serve) and PAIR adopts it there, or set node.listen.`,
            )
          : new ListenError("listen_failed", `cannot listen on ${host}:${port}: ${e.message}`),
      );
    });
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}
