/**
 * The rented nodes of one PAIR node, wired together: the shared spend ledger, the managed Hugging Face
 * endpoints, the Runpod pods and the Hugging Face Jobs (each made from the config), the registry of
 * rented nodes that probes them and routes to them, and the creator behind `pair rented create`.
 * Built in that order (each takes the ones before it) and returned as one object for node.ts to start,
 * route through and close.
 * Must not know: the client API, the cluster, command-line parsing, where the config came from.
 */

import { readFileSync } from "node:fs";
import {
  HttpsEndpointsTransport,
  HttpsJobsTransport,
  RetryAfterGate,
  type JobsTransport,
} from "@pair/huggingface";
import { proxyUrlFromTemplate, type ProxyUrlOf } from "@pair/runpod";
import type { Dispatcher } from "undici";
import type { Redacted, Runtime } from "@pair/cluster";
import { readRentedNodeValue, type PairConfig } from "../config/index.js";
import {
  attachedRentedConfigs,
  JobNodes,
  ManagedEndpoints,
  ManagedNodes,
  RentedCreator,
  RentedNodes,
  RunpodPodNodes,
  SharedLedger,
  type CredentialReader,
  type EndpointLookupFn,
  type ManagedEndpointsOptions,
} from "@pair/sponsor";
import type { Scheduler } from "../scheduler/scheduler.js";

/** Managed nodes' pass interval, poll interval and budget time zone (tests set them). */
export type RentedManagedOptions = Pick<ManagedEndpointsOptions, "tickMs" | "pollMs" | "timeZone">;

export interface RentedWiringOptions {
  readonly config: PairConfig;
  /** This node's cluster identity (names the ledger, tags what it creates). */
  readonly nodeId: string;
  /** The node's clock (billing, budgets, idle) and timers (passes, polls, the creator's watch). */
  readonly runtime: Runtime;
  readonly credentials: CredentialReader;
  /** Verified HTTPS to the rented nodes' data planes (their `/v1/models` probes). */
  readonly outbound: Dispatcher;
  /** Requests in flight per rented node (`rented:<name>`), for idle pauses. */
  readonly scheduler: Scheduler;
  readonly log: (line: string) => void;
  /** Scrubs secrets from what the rented nodes' views show. */
  readonly redact: (text: string) => string;
  readonly managed?: RentedManagedOptions | undefined;
  /** Runpod pods' proxy base URL; overrides the config's `providers.runpod.proxy_url` (in-process tests). */
  readonly runpodProxyUrl?: ProxyUrlOf | undefined;
  /** How often rented nodes are probed (default 30 s). */
  readonly rentedProbeIntervalMs?: number | undefined;
  /** A node was created or changed by `pair rented create` (peers should hear of it). */
  readonly onCreatorChange: () => void;
}

export interface RentedWiring {
  readonly ledger: SharedLedger;
  /** Managed Hugging Face endpoints (adoption, wake, idle and budget pauses, pause on exit). */
  readonly managed: ManagedEndpoints;
  /** Managed Runpod pods (made on demand; idle, budget and exit terminations). */
  readonly runpod: RunpodPodNodes;
  /** Managed Hugging Face Jobs (run on demand for a batch window; window, idle, budget and exit cancels). */
  readonly jobs: JobNodes;
  /** Every rented node this node sponsors: probes, views, routing. */
  readonly rented: RentedNodes;
  readonly creator: RentedCreator;
}

/** Builds the rented side of a node (nothing started: node.ts starts and closes each part). */
export function wireRentedNodes(o: RentedWiringOptions): RentedWiring {
  const { config, credentials, scheduler, log } = o;
  const dataDir = config.node.dataDir;
  // One retry-after window for every Hugging Face client of this sponsor (Endpoints and Jobs APIs,
  // the node probe, the creator): HF counts limits per account, so a 429 to one holds all.
  const hfGate = new RetryAfterGate();
  const ledger = new SharedLedger({
    dataDir,
    clock: o.runtime.clock,
    ledgerId: `ledger-${o.nodeId}`,
  });
  // Every managed node of every provider, by name: what routing and the admin API reach them through.
  const registry = new ManagedNodes();
  const managed = new ManagedEndpoints({
    nodeName: config.node.name,
    nodeId: o.nodeId,
    dataDir,
    configured: [
      ...config.rentedNodes,
      ...attachedRentedConfigs(dataDir, config.node.name, config.rentedNodes, readRentedNodeValue),
    ],
    credentials,
    transportFor: endpointsTransport(config, hfGate),
    dispatcher: o.outbound,
    inFlight: (name) => scheduler.inFlight(`rented:${name}`),
    log,
    ledger,
    registry,
    runtime: o.runtime,
    ...o.managed,
  });
  // Every Runpod base URL, created pod or pod attached by id, comes from this one template.
  const runpodProxyUrl = o.runpodProxyUrl ?? proxyUrlFromTemplate(config.providers.runpod.proxyUrl);
  const runpod = runpodPodNodes(config, o, { ledger, registry, runpodProxyUrl });
  const jobs = jobNodes(config, o, { ledger, registry, gate: hfGate });
  const rented = new RentedNodes({
    nodeName: config.node.name,
    readConfig: readRentedNodeValue,
    dataDir,
    configured: config.rentedNodes,
    credentials,
    dispatcher: o.outbound,
    lookupEndpoint: endpointLookup(config, hfGate),
    managed: registry,
    runpodProxyUrl,
    log,
    redact: o.redact,
    timers: o.runtime.timers,
    ...(o.rentedProbeIntervalMs === undefined ? {} : { probeIntervalMs: o.rentedProbeIntervalMs }),
  });
  const creator = new RentedCreator({
    nodeName: config.node.name,
    readConfig: readRentedNodeValue,
    credentials,
    transportFor: endpointsTransport(config, hfGate),
    rented,
    managed,
    jobs,
    jobsTransportFor: jobsTransport(config, hfGate),
    ...(o.managed?.pollMs === undefined ? {} : { watchMs: o.managed.pollMs }),
    timers: o.runtime.timers,
    onChange: o.onCreatorChange,
    log,
  });
  return { ledger, managed, runpod, jobs, rented, creator };
}

/** The managed Runpod pods of this config (none when it declares no `pod:` node). */
function runpodPodNodes(
  config: PairConfig,
  options: RentedWiringOptions,
  deps: { ledger: SharedLedger; registry: ManagedNodes; runpodProxyUrl: ProxyUrlOf },
): RunpodPodNodes {
  const extraCaPem =
    config.tls.extraCaFile === null ? undefined : readFileSync(config.tls.extraCaFile, "utf8");
  return new RunpodPodNodes({
    nodeId: options.nodeId,
    dataDir: config.node.dataDir,
    configured: config.rentedNodes,
    credentials: options.credentials,
    apiBaseUrl: config.providers.runpod.api,
    ...(extraCaPem === undefined ? {} : { extraCaPem }),
    proxyUrl: deps.runpodProxyUrl,
    ledger: deps.ledger,
    registry: deps.registry,
    inFlight: (name) => options.scheduler.inFlight(`rented:${name}`),
    log: options.log,
    runtime: options.runtime,
    ...options.managed,
  });
}

/** The managed Hugging Face Jobs of this config (none when it declares no `job:` node). */
function jobNodes(
  config: PairConfig,
  options: RentedWiringOptions,
  deps: { ledger: SharedLedger; registry: ManagedNodes; gate: RetryAfterGate },
): JobNodes {
  const extraCaPem =
    config.tls.extraCaFile === null ? undefined : readFileSync(config.tls.extraCaFile, "utf8");
  return new JobNodes({
    nodeId: options.nodeId,
    dataDir: config.node.dataDir,
    configured: config.rentedNodes,
    created: attachedRentedConfigs(
      config.node.dataDir,
      config.node.name,
      config.rentedNodes,
      readRentedNodeValue,
    ),
    credentials: options.credentials,
    hubApi: config.providers.huggingface.hubApi,
    ...(extraCaPem === undefined ? {} : { extraCaPem }),
    gate: deps.gate,
    ledger: deps.ledger,
    registry: deps.registry,
    inFlight: (name) => options.scheduler.inFlight(`rented:${name}`),
    log: options.log,
    runtime: options.runtime,
    ...options.managed,
  });
}

/** A Jobs API client per token, for `pair rented create --provider huggingface-job` (verified HTTPS). */
function jobsTransport(config: PairConfig, gate: RetryAfterGate): (token: Redacted<string>) => JobsTransport {
  const extraCaPem =
    config.tls.extraCaFile === null ? undefined : readFileSync(config.tls.extraCaFile, "utf8");
  return (token) =>
    new HttpsJobsTransport({
      token: { reveal: () => token.reveal() },
      hubApi: config.providers.huggingface.hubApi,
      ...(extraCaPem === undefined ? {} : { extraCaPem }),
      gate,
    });
}

/** An Endpoints API client per token, for managed endpoints (verified HTTPS, extra CA, default retries). */
function endpointsTransport(
  config: PairConfig,
  gate: RetryAfterGate,
): ManagedEndpointsOptions["transportFor"] {
  const extraCaPem =
    config.tls.extraCaFile === null ? undefined : readFileSync(config.tls.extraCaFile, "utf8");
  return (token) =>
    new HttpsEndpointsTransport({
      token: { reveal: () => token.reveal() },
      endpointsApi: config.providers.huggingface.endpointsApi,
      hubApi: config.providers.huggingface.hubApi,
      catalogApi: config.providers.huggingface.catalogApi,
      ...(extraCaPem === undefined ? {} : { extraCaPem }),
      gate,
    });
}

/** Hugging Face endpoints looked up by name through the Endpoints API (verified HTTPS, extra CA). */
function endpointLookup(config: PairConfig, gate: RetryAfterGate): EndpointLookupFn {
  const extraCaPem =
    config.tls.extraCaFile === null ? undefined : readFileSync(config.tls.extraCaFile, "utf8");
  return async ({ namespace, name }, token) => {
    const transport = new HttpsEndpointsTransport({
      token: { reveal: () => token.reveal() },
      endpointsApi: config.providers.huggingface.endpointsApi,
      hubApi: config.providers.huggingface.hubApi,
      ...(extraCaPem === undefined ? {} : { extraCaPem }),
      retry: { maxAttempts: 1 },
      gate,
    });
    try {
      const e = await transport.getEndpoint(namespace, name);
      return {
        state: e.state === "unrecognized" ? e.rawState : e.state,
        url: e.url,
        // "public" here means reachable without a token: HF's own type word, read as the reference spells it.
        accessType: e.accessType,
        repository: e.repository,
        message: e.message,
        accelerator: e.accelerator,
        instanceType: e.instanceType,
        instanceSize: e.instanceSize,
      };
    } finally {
      await transport.close();
    }
  };
}
