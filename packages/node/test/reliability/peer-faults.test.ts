// Peer faults with a real `pair serve` child: the laptop (in process) is paired with pc-frozen, a
// `pair serve` child whose engine emulator alone serves qwen:32b. The child is frozen with SIGSTOP
// (its sockets stay open, nothing answers: a laptop lid closed, a process stuck) before a request
// and mid-stream, and killed with SIGKILL mid-stream. Each time the laptop's client gets an answer
// within the bound — a clean 502 upstream_error or a failover to pc-other before the first byte, a
// cut stream after it, never a retry after the first byte — its Jobs list keeps no ghost, its
// history records the failure against the node, and its own model keeps serving during the freeze.
// The bound: the laptop's membership notices a silent peer at its next failed poll (refresh +
// timeout, after a round that may have started just before the freeze: + timeout), and cuts what it
// relays from that peer if nothing came from it for a timeout. Numbers are printed for
// docs/reliability.md.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEngineEmulator, type EngineEmulator } from "@pair/emulators";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorkloadJson } from "../../src/history/workload-history.js";
import { admin, startTestNodeWith, type TestNode } from "../cluster/node-pair-harness.js";
import { until } from "../support/eventually.js";
import { ServeChild } from "../support/serve-child.js";
import { postChat } from "../support/chat.js";

const REFRESH_MS = 500;
const TIMEOUT_MS = 500;
/** When the laptop gives up on a silent peer, at the latest (see the header). */
const NOTICE_MS = REFRESH_MS + 2 * TIMEOUT_MS;
/** Scheduling slack on a shared 2-core machine. */
const SLACK_MS = 1_500;
const BOUND_MS = NOTICE_MS + SLACK_MS;
/** No test waits longer than this for a reply: a hang fails the test instead of stalling it. */
const HANG_MS = 20_000;
const REMOTE = "qwen:32b";
const LOCAL = "llama3:8b";
/** `max_tokens` where the answer's length does not matter (a full one takes 10 s). */
const SHORT = 5;

let dir: string;
let engine: EngineEmulator;
let frozen: ServeChild;
let laptop: TestNode;
let other: TestNode | undefined;
const measured: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pair-peer-faults-"));
  // 1,000 tokens 10 ms apart: a stream lasts 10 s, far past the bound, so only a cut ends it early.
  engine = await startEngineEmulator({
    api: "ollama",
    name: "pc-frozen-ollama",
    models: [{ name: REMOTE, maxTokens: 1_000 }],
    tokenDelayMs: 10,
  });
  frozen = await ServeChild.create({ name: "pc-frozen", dir, engineUrl: engine.url });
  [laptop] = await Promise.all([
    startTestNodeWith("laptop", {
      models: [LOCAL],
      maxTokens: 40,
      tokenDelayMs: 20,
      refreshMs: REFRESH_MS,
      timeoutMs: TIMEOUT_MS,
    }),
    frozen.start(),
  ]);
  const joined = await admin(laptop, "/pair/v1/join", {
    address: frozen.clusterAddress,
    pin: await frozen.pin(),
  });
  expect(joined.status).toBe(200);
  await until(async () => (await servingNodes(REMOTE)).includes("pc-frozen"), 5_000);
}, 60_000);

afterAll(async () => {
  frozen?.thaw();
  await frozen?.kill();
  await laptop?.close();
  await other?.close();
  await engine?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  console.log(`peer faults:\n  ${measured.join("\n  ")}`);
});

async function servingNodes(model: string): Promise<string[]> {
  const rows = (await admin(laptop, "/pair/v1/models")).json as { model: string; nodes: string[] }[];
  return rows.find((r) => r.model === model)?.nodes ?? [];
}

async function jobs(): Promise<WorkloadJson[]> {
  return (await admin(laptop, "/pair/v1/jobs")).json as WorkloadJson[];
}

/** The laptop's latest history row for the remote model (newest first). */
async function lastHistory(): Promise<WorkloadJson | undefined> {
  return ((await admin(laptop, "/pair/v1/history")).json as WorkloadJson[]).find((w) => w.model === REMOTE);
}

interface Reply {
  readonly status: number;
  readonly servedBy: unknown;
  readonly text: string;
  /** How the body ended: complete, cut by the node, or still open when the test gave up. */
  readonly end: "complete" | "cut" | "hang";
  /** When the reply ended (performance.now()). */
  readonly endedAt: number;
}

/**
 * A streamed chat on the laptop; `onFirstBytes` runs once the first body bytes are in. The body is
 * read to its end, its cut, or HANG_MS.
 */
async function chat(
  model: string,
  onFirstBytes?: () => void | Promise<void>,
  maxTokens?: number,
): Promise<Reply> {
  const hang = AbortSignal.timeout(HANG_MS);
  const res = await postChat(laptop.node.url, { model, stream: true, maxTokens, signal: hang }).catch(
    (cause: unknown) => {
      if (hang.aborted) return undefined; // no headers within HANG_MS
      throw cause;
    },
  );
  if (res === undefined)
    return { status: 0, servedBy: undefined, text: "", end: "hang", endedAt: performance.now() };
  let text = "";
  let end: Reply["end"] = "complete";
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      const first = text === "";
      text += chunk.toString("utf8");
      if (first && onFirstBytes !== undefined) await onFirstBytes();
    }
  } catch {
    end = hang.aborted ? "hang" : "cut";
  }
  if (end === "complete" && res.statusCode === 200 && !text.includes("[DONE]")) end = "cut";
  return {
    status: res.statusCode,
    servedBy: res.headers["x-pair-served-by"],
    text,
    end,
    endedAt: performance.now(),
  };
}

/** The SSE events' data, `[DONE]` excluded. */
function events(text: string): { id: string; choices: { delta: { role?: string; content?: string } }[] }[] {
  return text
    .split("\n\n")
    .filter((e) => e.startsWith("data: {"))
    .map((e) => JSON.parse(e.slice(6)) as { id: string; choices: { delta: { role?: string } }[] });
}

/** No job stays running on the laptop (a ghost would). */
async function noGhosts(): Promise<void> {
  await until(async () => (await jobs()).length === 0, 2_000);
}

/** Thaw (or restart) pc-frozen and wait until the laptop routes to it again and it serves. */
async function rejoin(): Promise<void> {
  await until(async () => (await servingNodes(REMOTE)).includes("pc-frozen"), 10_000);
  const again = await chat(REMOTE, undefined, SHORT);
  expect(again).toMatchObject({ status: 200, servedBy: "pc-frozen", end: "complete" });
}

describe("a peer frozen or killed", () => {
  it("frozen before a request (only it serves the model): a clean 502 upstream_error within the bound, while the laptop's own model serves", async () => {
    await chat(REMOTE, undefined, SHORT); // a pooled connection: the request is sent, then nothing answers
    frozen.freeze();
    const frozenAt = performance.now();
    const [remote, local] = await Promise.all([chat(REMOTE, undefined, SHORT), chat(LOCAL)]);
    const tookMs = remote.endedAt - frozenAt;
    measured.push(`frozen before a request, no other node: ${remote.status} after ${Math.round(tookMs)} ms`);

    expect(local).toMatchObject({ status: 200, servedBy: "laptop", end: "complete" });
    expect(remote.status).toBe(502);
    expect((JSON.parse(remote.text) as { error: { code: string } }).error.code).toBe("upstream_error");
    expect(tookMs).toBeLessThan(BOUND_MS);
    await noGhosts();
    expect(await lastHistory()).toMatchObject({
      model: REMOTE,
      status: "failed",
      error_code: "upstream_error",
      attempts: [{ target: "node pc-frozen", error: "upstream_error" }],
    });

    frozen.thaw();
    await rejoin();
  });

  it("frozen before a request, another node serving the model: fails over to it within the bound", async () => {
    other = await startTestNodeWith("pc-other", {
      models: [REMOTE],
      refreshMs: REFRESH_MS,
      timeoutMs: TIMEOUT_MS,
    });
    const pin = (await admin(other, "/pair/v1/pin", {})).json as { pin: string };
    expect(
      (await admin(laptop, "/pair/v1/join", { address: other.clusterAddress, pin: pin.pin })).status,
    ).toBe(200);
    await until(async () => (await servingNodes(REMOTE)).length === 2, 5_000);
    await chat(REMOTE, undefined, SHORT);
    // pc-frozen, paired first, is tried first while both are idle (least loaded first, stable).
    await until(async () => {
      const nodes = (await admin(laptop, "/pair/v1/nodes")).json as { name: string; in_flight: number }[];
      return nodes.every((n) => n.in_flight === 0);
    }, 5_000);

    frozen.freeze();
    const frozenAt = performance.now();
    const reply = await chat(REMOTE, undefined, SHORT);
    const tookMs = reply.endedAt - frozenAt;
    measured.push(
      `frozen before a request, pc-other serving too: failover, complete after ${Math.round(tookMs)} ms`,
    );

    expect(reply).toMatchObject({ status: 200, servedBy: "pc-other", end: "complete" });
    expect(tookMs).toBeLessThan(BOUND_MS + 1_000); // + the answer itself
    await noGhosts();
    expect(await lastHistory()).toMatchObject({
      status: "completed",
      serving_node: "pc-other",
      attempts: [{ target: "node pc-frozen", error: "upstream_error" }, { target: "node pc-other" }],
    });

    frozen.thaw();
    await until(async () => (await servingNodes(REMOTE)).length === 2, 10_000);
    // pc-other leaves again: the next tests have pc-frozen as the only node serving the model.
    await other.close();
    other = undefined;
    await until(async () => (await servingNodes(REMOTE)).join() === "pc-frozen", 5_000);
  });

  it("frozen mid-stream: the stream is cut within the bound, never retried elsewhere, and the laptop serves its own model meanwhile", async () => {
    const before = engine.stats().requests;
    let frozenAt = 0;
    let local: Promise<Reply> | undefined;
    const reply = await chat(REMOTE, () => {
      frozen.freeze();
      frozenAt = performance.now();
      local = chat(LOCAL);
    });
    const tookMs = reply.endedAt - frozenAt;
    measured.push(`frozen mid-stream: cut after ${Math.round(tookMs)} ms`);

    expect(reply.status).toBe(200);
    expect(reply.end).toBe("cut");
    expect(tookMs).toBeLessThan(BOUND_MS);
    // One answer, not restarted: one id, one role delta, one request reached the engine.
    const got = events(reply.text);
    expect(got.length).toBeGreaterThan(0);
    expect(new Set(got.map((e) => e.id)).size).toBe(1);
    expect(got.filter((e) => e.choices[0]?.delta.role !== undefined).length).toBeLessThanOrEqual(1);
    expect(engine.stats().requests - before).toBe(1);
    expect(await local).toMatchObject({ status: 200, servedBy: "laptop", end: "complete" });
    await noGhosts();
    expect(await lastHistory()).toMatchObject({
      model: REMOTE,
      status: "failed",
      error_code: "upstream_error",
      serving_node: "pc-frozen",
      attempts: [{ target: "node pc-frozen" }],
    });

    frozen.thaw();
    await rejoin();
  });

  it("killed mid-stream: the stream is cut at once, not retried; restarted on its data dir, it rejoins and serves", async () => {
    const before = engine.stats().requests;
    let killedAt = 0;
    const reply = await chat(REMOTE, async () => {
      killedAt = performance.now();
      await frozen.kill();
    });
    const tookMs = reply.endedAt - killedAt;
    measured.push(`killed mid-stream: cut after ${Math.round(tookMs)} ms`);

    expect(reply.status).toBe(200);
    expect(reply.end).toBe("cut");
    expect(tookMs).toBeLessThan(BOUND_MS);
    expect(new Set(events(reply.text).map((e) => e.id)).size).toBe(1);
    expect(engine.stats().requests - before).toBe(1);
    await noGhosts();
    expect(await lastHistory()).toMatchObject({
      status: "failed",
      error_code: "upstream_error",
      serving_node: "pc-frozen",
      attempts: [{ target: "node pc-frozen" }],
    });

    const restartedAt = performance.now();
    await frozen.start();
    await rejoin();
    measured.push(
      `killed, restarted: serving again ${Math.round(performance.now() - restartedAt)} ms after the restart began`,
    );
  });
});
