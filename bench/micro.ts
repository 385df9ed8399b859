/**
 * Micro-benchmarks of the decisions PAIR makes per request or per pass (issue 13), in this process,
 * each timed over many repetitions after a warm-up, median of several batches:
 *  - routing: `candidates()` for one request on a node with 100 peers × 1,000 models each
 *    (peers served by a model index as PeerLinks builds one per membership view), target ≤ 50 µs;
 *  - reconciliation: `reconcile()` of 1,000 / 5,000 / 10,000 deployments against a listing of as
 *    many resources, target ≤ 200 ms at 10,000 and linear;
 *  - ledger accrual: one Tick that bills a new minute on 1,000 open episodes;
 *  - history: event-loop time to hand a batch of 512 finished workloads to SQLite, written on the
 *    event loop (before) and posted to the writer thread (after);
 *  - context fit: what asking three candidates' windows costs a short prompt (the free bound only),
 *    against a prompt near the windows (estimated once), and against parsing the request's JSON,
 *    which every request pays anyway.
 *
 *   npm run bench:micro [-- --quick]
 *
 * Must not know: HTTP, processes (nothing here touches a socket).
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { SYSTEM_RUNTIME } from "@pair/cluster";
import { WorkloadHistory } from "../packages/node/src/history/workload-history.js";
import { reconcile, type DeploymentRecord, type HostingState, type Listing } from "@pair/provision";
import { Ledger, MIN, T0 } from "../packages/ledger/test/fixtures.js";
import { CAPS, OWNER, at } from "../packages/provision/test/fixtures.js";
import { Driver, keyOf } from "../packages/provision/test/harness.js";
import type { EngineInventory } from "../packages/node/src/engines/engine-inventory.js";
import type { Scheduler } from "../packages/node/src/scheduler/scheduler.js";
import {
  candidates,
  type ForwardDeps,
  type ForwardRequest,
  type PeerUpstream,
  type PeerUpstreams,
} from "../packages/node/src/server/upstreams.js";
import { RequestFit } from "../packages/node/src/context/request-fit.js";
import type { DialectRequests } from "@pair/dialects";
import { median } from "./stats.js";

const { values } = parseArgs({ options: { quick: { type: "boolean", default: false } }, strict: true });
const BATCHES = values.quick ? 3 : 7;

/** Median time of one call over `batches` batches of `reps` calls, in ms. */
function timeIt(reps: number, fn: (i: number) => unknown): number {
  for (let i = 0; i < Math.min(reps, 1000); i++) fn(i);
  const per: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) fn(i);
    per.push((performance.now() - t0) / reps);
  }
  return median(per);
}

function routing(): string {
  const PEERS = 100;
  const MODELS = 1000;
  const peers: PeerUpstream[] = Array.from({ length: PEERS }, (_, i) => ({
    nodeId: `node-${i}`,
    name: `pc-${i}`,
    maxConcurrent: 4,
  }));
  // Every peer serves every model: the largest candidate list a request can meet.
  const byModel = new Map<string, PeerUpstream[]>();
  for (let m = 0; m < MODELS; m++) byModel.set(`model-${m}:7b`, peers);
  const link = { dispatcher: {} as never, baseUrl: "https://127.0.0.1:1" };
  const peerUpstreams: PeerUpstreams = {
    serving: (model) => byModel.get(model) ?? [],
    link: () => link,
    sponsoring: () => [],
    firstByteTimeoutMs: 120_000,
    markDown: () => {},
  };
  const deps = {
    nodeName: "bench",
    inventory: { serving: () => [] } as unknown as EngineInventory,
    scheduler: { inFlight: () => 0 } as unknown as Scheduler,
    dispatcher: {} as never,
    peers: peerUpstreams,
    nowMs: () => 0,
    monoMs: () => 0,
  } as unknown as ForwardDeps;
  const requests = Array.from(
    { length: 64 },
    (_, i) =>
      ({
        route: "openai-chat",
        request: { model: `model-${(i * 97) % MODELS}:7b` },
        workload: { requester: "local" },
      }) as unknown as ForwardRequest,
  );
  const tried = new Set<string>();
  let n = 0;
  const ms = timeIt(20_000, (i) => (n += candidates(deps, requests[i & 63]!, tried).upstreams.length));
  if (n === 0) throw new Error("routing: no candidates");
  return `| routing decision, 100 peers × 1,000 models (every peer serves the model) | ${(ms * 1000).toFixed(1)} µs | ≤ 50 µs | ${ms * 1000 <= 50 ? "PASS" : "MISS"} |`;
}

/** A hosting state of `n` running deployments, cloned from one made through the contract. */
function hostingState(n: number): { state: HostingState; listing: Listing } {
  const d = new Driver();
  d.created("seed");
  const seed = d.state.deployments["seed"] as DeploymentRecord;
  const deployments: Record<string, DeploymentRecord> = {};
  const resources = [];
  for (let i = 0; i < n; i++) {
    const id = `d${i}`;
    deployments[id] = { ...seed, id, key: keyOf(id) };
    resources.push({ key: keyOf(id), status: "RUNNING", ownerTag: OWNER });
  }
  return {
    state: { ...d.state, deployments },
    listing: { complete: true, startedAtMs: at(10_000).wallMs, resources },
  };
}

function reconciliation(): string[] {
  const scope = {
    provider: "fake",
    account: "acct",
    ownerTag: OWNER,
    capabilities: CAPS,
    busyRequeueMs: 5_000,
    idleRequeueMs: 60_000,
  };
  const rows: string[] = [];
  const times: number[] = [];
  for (const n of [1_000, 5_000, 10_000]) {
    const { state, listing } = hostingState(n);
    const ms = timeIt(n >= 5_000 ? 1 : 3, () => reconcile(state, listing, scope, at(10_000).wallMs));
    const plan = reconcile(state, listing, scope, at(10_000).wallMs);
    if (plan.observe.length !== n) throw new Error(`reconcile: observed ${plan.observe.length} of ${n}`);
    times.push(ms);
    rows.push(
      `| reconcile ${n.toLocaleString("en")} deployments against a listing of as many | ${ms.toFixed(1)} ms | ` +
        `${n === 10_000 ? `≤ 200 ms | ${ms <= 200 ? "PASS" : "MISS"}` : "| "} |`,
    );
  }
  const growth = times[2]! / times[0]!;
  rows.push(
    `| reconcile: time at 10k ÷ time at 1k | ${growth.toFixed(1)}× | ≈ 10× (linear) | ${growth <= 15 ? "PASS" : "MISS"} |`,
  );
  return rows;
}

function accrual(): string {
  const EPISODES = 1000;
  const ledger = new Ledger().open();
  for (let i = 0; i < EPISODES; i++) ledger.start(`ep${i}`, T0);
  let minute = 1;
  const ms = timeIt(5, () => {
    minute += 1;
    ledger.tick(T0 + minute * MIN + 1);
  });
  const open = Object.values(ledger.state.episodes ?? {}).length;
  return `| ledger Tick billing a new minute on ${EPISODES.toLocaleString("en")} open episodes (${open} in state) | ${ms.toFixed(2)} ms | – | |`;
}

function historyBatch(): string[] {
  const BATCH = 512;
  const dir = mkdtempSync(join(tmpdir(), "pair-bench-history-"));
  try {
    return ([false, true] as const).map((onThread) => {
      const h = new WorkloadHistory({
        path: join(dir, `h-${onThread}.db`),
        maxRows: 100_000,
        maxDays: 30,
        runtime: SYSTEM_RUNTIME,
        flushIntervalMs: 0,
        pruneIntervalMs: 0,
        maxBatch: BATCH,
        writeOnThread: onThread,
      });
      let n = 0;
      const blocked: number[] = [];
      const make = () => ({
        id: `w${n++}`,
        model: "m",
        route: "/v1/chat/completions",
        originNode: "a",
        requester: "local",
        startedAtMs: n,
      });
      // Event-loop time for each stretch of BATCH workloads, which includes handing one batch over
      // (a single call's longest time says more about the OS scheduler on a loaded machine).
      for (let b = 0; b < BATCHES * 4; b++) {
        const t0 = performance.now();
        for (let i = 0; i < BATCH; i++) h.finish(h.begin(make()), "completed");
        blocked.push(performance.now() - t0);
      }
      h.close();
      const ms = median(blocked.slice(BATCHES));
      return `| history: event-loop time per ${BATCH} workloads (begin, finish, batch handed over), ${onThread ? "writer thread (after)" : "on the event loop (before)"} | ${ms.toFixed(2)} ms | | |`;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function contextFit(): string[] {
  const WINDOW = 8192;
  const chat = (words: number) => ({
    model: "m",
    max_tokens: 256,
    messages: [
      { role: "system", content: "You are terse." },
      { role: "user", content: Array.from({ length: words }, (_, i) => `word${i % 97}`).join(" ") },
    ],
  });
  const candidates = ["a", "b", "c"];
  const fitCost = (body: string) => {
    const request = JSON.parse(body) as DialectRequests["/v1/chat/completions"];
    const bytes = Buffer.byteLength(body);
    let estimated = 0;
    const ms = timeIt(20_000, () => {
      const fit = new RequestFit("/v1/chat/completions", request, bytes);
      for (const id of candidates) fit.holds(WINDOW, id, id);
      if (fit.estimated !== undefined) estimated++;
    });
    return { ms, estimated: estimated > 0, bytes };
  };
  const shortBody = JSON.stringify(chat(30));
  const nearBody = JSON.stringify(chat(3_000));
  const parse = timeIt(20_000, () => JSON.parse(shortBody));
  const short = fitCost(shortBody);
  const near = fitCost(nearBody);
  const us = (ms: number) => `${(ms * 1000).toFixed(2)} µs`;
  return [
    `| context fit, short prompt (${short.bytes} B, 3 candidates × ${WINDOW}-token windows; estimated: ${short.estimated ? "yes" : "no"}) | ${us(short.ms)} | ${(short.ms / parse).toFixed(2)}× parsing its JSON (${us(parse)}) | |`,
    `| context fit, prompt near the windows (${near.bytes} B; estimated: ${near.estimated ? "yes" : "no"}) | ${us(near.ms)} | – | |`,
  ];
}

const rows: string[] = [];
for (const [name, run] of [
  ["routing", () => [routing()]],
  ["reconciliation", reconciliation],
  ["accrual", () => [accrual()]],
  ["history", historyBatch],
  ["context fit", contextFit],
] as const) {
  try {
    rows.push(...run());
  } catch (error) {
    rows.push(`| ${name} | failed: ${error instanceof Error ? error.message : String(error)} | | |`);
  }
}
console.log(["| micro-benchmark | median | target | |", "| --- | ---: | --- | --- |", ...rows].join("\n"));
