/**
 * The sponsor stage: the rented nodes this node pays for or attaches (built in rented-wiring.ts),
 * the verified HTTPS agent to their data planes, the credentials they read (each value told to the
 * redactor) and the history of their states. Its start waits for the managed nodes' first pass at
 * most MANAGED_FIRST_PASS_WAIT_MS; its close pauses, terminates or cancels what bills (bounded by
 * `exit_timeout_s`; the unconfirmed stay open in SQLite) after the last request, before the ports.
 * Must not know: routes, the client port, peers.
 */

import { SYSTEM_TIMERS, type TimerHandle } from "@pair/cluster";
import { OsCredentialStore, type SecretRedactor } from "../credentials/index.js";
import type { Workload } from "../history/workload-history.js";
import type { NodeOptions } from "./node-options.js";
import { createOutboundAgent, observedState, RentedStateHistory, type CredentialReader } from "@pair/sponsor";
import { wireRentedNodes, type RentedWiring } from "./rented-wiring.js";
import type { ClusterStage } from "./cluster.js";
import type { Core } from "./core.js";
import type { LocalStage } from "./local.js";
import type { Stage } from "./stage.js";

/** Longest the start waits for the managed rented nodes' first pass before it serves anyway. */
export const MANAGED_FIRST_PASS_WAIT_MS = 5_000;

export interface SponsorStage extends Stage, RentedWiring {
  /** Verified HTTPS to the rented nodes' data planes. */
  readonly outbound: ReturnType<typeof createOutboundAgent>;
  readonly stateHistory: RentedStateHistory;
  /** Record the rented nodes' states now (the dashboard's state history); a failure is logged. */
  observe(): void;
  start(): Promise<void>;
}

export function sponsorStage(
  options: NodeOptions,
  core: Core,
  cluster: ClusterStage,
  local: LocalStage,
): SponsorStage {
  const { config } = options;
  const { log, redactor } = core;
  const outbound = createOutboundAgent({ extraCaFile: config.tls.extraCaFile });
  const credentials = registeringReader(options.seams?.credentials ?? new OsCredentialStore(), redactor);
  const wiring = wireRentedNodes({
    config,
    nodeId: cluster.cluster.identity.nodeId,
    credentials,
    outbound,
    scheduler: local.scheduler,
    log,
    redact: (text) => redactor.redact(text),
    runtime: core.runtime,
    managed: options.seams?.managed,
    runpodProxyUrl: options.overrides?.runpodProxyUrl,
    rentedProbeIntervalMs: options.overrides?.rentedProbeIntervalMs,
    onCreatorChange: () => cluster.announce("changed"),
  });
  const { ledger, managed, runpod, jobs, rented, creator } = wiring;
  const stateHistory = new RentedStateHistory({ dataDir: core.dataDir, log });
  // The node whose request reached a rented node since `sinceMs`: one it served (running, or finished
  // since), else one still waiting for a model only it serves (a wake's request learns its serving
  // node only when the answer comes).
  const wokenBy = (name: string, sinceMs: number): string | undefined => {
    const reached = (w: Workload) =>
      w.servingNode === name || w.attempts.some((a) => a.target === `rented node ${name}`);
    const running = local.history.running();
    const served = running.find(reached) ?? local.history.history({ sinceMs, limit: 200 }).find(reached);
    if (served !== undefined) return served.originNode;
    const models = rented.list().find((v) => v.name === name)?.models ?? [];
    return running.find(
      (w) => w.servingNode === undefined && w.startedAtMs >= sinceMs && models.includes(w.model),
    )?.originNode;
  };
  const observe = () => {
    try {
      stateHistory.observe(rented.list().map(observedState), core.wallMs(), wokenBy);
    } catch (cause) {
      log(`rented nodes' state history: ${String(cause)}`);
    }
  };
  return {
    name: "sponsor",
    ...wiring,
    outbound,
    stateHistory,
    observe,
    start: async () => {
      // The managed nodes' first pass asks their providers (list, price, stops due: an orphan's cancel,
      // a window's end). A provider call that hangs must not keep the node from serving: wait for it at
      // most MANAGED_FIRST_PASS_WAIT_MS; the pass goes on in the background (its stops are in SQLite first).
      const firstPassWaitMs = options.overrides?.managedFirstPassWaitMs ?? MANAGED_FIRST_PASS_WAIT_MS;
      const managedStarts = Promise.all([
        managed.start().catch((cause: unknown) => log(`managed rented nodes: ${String(cause)}`)),
        runpod.start().catch((cause: unknown) => log(`Runpod rented nodes: ${String(cause)}`)),
        jobs.start().catch((cause: unknown) => log(`Hugging Face Jobs rented nodes: ${String(cause)}`)),
      ]);
      await Promise.all([
        rented.start(),
        waitAtMost(managedStarts, firstPassWaitMs, () =>
          log(
            `managed rented nodes: their first pass still waits for a provider after ` +
              `${firstPassWaitMs / 1000} s; serving meanwhile (it goes on in the background)`,
          ),
        ),
      ]);
      // Routing learns at once which managed pods exist (their state needs no probe).
      await rented.probe();
      observe();
    },
    quiesce: () => {
      rented.stop();
      creator.close();
    },
    close: async () => {
      await Promise.all([managed.close(), runpod.close(), jobs.close()]);
      ledger.close();
    },
    release: () => outbound.close(),
  };
}

/** Resolves when `work` settles or after `ms`, whichever comes first (`onLate` then); never rejects. */
async function waitAtMost(work: Promise<unknown>, ms: number, onLate: () => void): Promise<void> {
  // An exit is bounded in real time, whatever clock the node runs on (a test's virtual one).
  let timer: TimerHandle | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = SYSTEM_TIMERS.after(() => resolve("late"), ms);
  });
  const first = await Promise.race([work.then(() => "done" as const), late]);
  timer?.cancel();
  if (first === "late") onLate();
}

/** Reads credentials through `inner`, telling the redactor each value read. */
function registeringReader(inner: CredentialReader, redactor: SecretRedactor): CredentialReader {
  return {
    get: async (ref) => {
      const secret = await inner.get(ref);
      if (secret !== undefined) redactor.add(secret.reveal());
      return secret;
    },
  };
}
