// A peer revoked while its forwarded stream is in progress. laptop → pc-3090 → engine is streaming
// when pc-3090 runs `pair unpair laptop`. What docs/security.md ("Pinning and revocation") says:
// the pin goes, and the connections already open with it are closed — so the stream is cut, not
// finished: the laptop's client sees its stream end without its last event, the engine request is
// cancelled, both Jobs lists empty out and the histories record the request as not completed. The
// laptop's next request with the revoked certificate is refused during the TLS handshake (the peer
// server sends no HTTP at all), and a client of the laptop gets a clean JSON error. Nothing else on
// pc-3090 is touched: a stream of its own client and one forwarded by another paired peer, both
// running at the moment of the revocation, finish with `[DONE]`, and that peer still reaches it.
import { request, type Dispatcher } from "undici";
import { describe, expect, it } from "vitest";
import type { WorkloadJson } from "../../src/history/workload-history.js";
import {
  admin,
  agentBetween,
  joinWith,
  peerHello,
  peersOf,
  showPin,
  startTestNodeWith,
  type TestNode,
} from "../cluster/node-pair-harness.js";
import { cleanupAfterEach, until } from "../support/eventually.js";

const defer = cleanupAfterEach();
const MODEL = "qwen:32b";
const FAST = { refreshMs: 150, timeoutMs: 400 };
/** 400 tokens at 20 ms: an 8 s answer, so every stream is still running at the revocation. */
const LONG = { models: [MODEL], maxTokens: 400, tokenDelayMs: 20 };
/** The revoked stream must end well before it would have finished. */
const CUT_BOUND_MS = 2_000;

async function node(name: string, options = {}): Promise<TestNode> {
  const n = await startTestNodeWith(name, { ...FAST, ...options });
  defer(() => n.close());
  return n;
}

async function pair(joiner: TestNode, shower: TestNode): Promise<void> {
  const joined = await joinWith(joiner, shower, await showPin(shower));
  expect(joined.status).toBe(200);
}

async function sees(n: TestNode, model: string): Promise<void> {
  await until(async () => {
    const rows = (await admin(n, "/pair/v1/models")).json as { model: string; nodes: string[] }[];
    return rows.some((r) => r.model === model && r.nodes.length > 0);
  });
}

const jobs = async (n: TestNode) => (await admin(n, "/pair/v1/jobs")).json as WorkloadJson[];
const historyOf = async (n: TestNode) => (await admin(n, "/pair/v1/history")).json as WorkloadJson[];

/** A streamed chat on `n`'s client port, its first event already read. */
async function startedStream(n: TestNode): Promise<{ rest: Promise<string>; served: string }> {
  const res = await request(`${n.node.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(res.statusCode).toBe(200);
  return { rest: readAll(res.body), served: String(res.headers["x-pair-served-by"]) };
}

/** Everything the body still sends; a body that breaks resolves with what came, plus a marker. */
async function readAll(body: Dispatcher.ResponseData["body"]): Promise<string> {
  let text = "";
  try {
    for await (const chunk of body) text += (chunk as Buffer).toString();
  } catch (error) {
    text += `\n<broken: ${(error as Error).message}>`;
  }
  return text;
}

describe("a peer revoked while its stream is in progress", () => {
  it("cuts that stream and refuses the revoked certificate at the handshake; the node's other streams and peers carry on", async () => {
    const desktop = await node("pc-3090", LONG);
    const laptop = await node("laptop");
    const tablet = await node("tablet");
    await pair(laptop, desktop);
    await pair(tablet, desktop);
    await Promise.all([sees(laptop, MODEL), sees(tablet, MODEL)]);

    // Three streams through pc-3090's engine at once: the laptop's (forwarded), the tablet's
    // (forwarded) and pc-3090's own client's.
    const [fromLaptop, fromTablet, local] = await Promise.all([
      startedStream(laptop),
      startedStream(tablet),
      startedStream(desktop),
    ]);
    expect([fromLaptop.served, fromTablet.served, local.served]).toEqual(["pc-3090", "pc-3090", "pc-3090"]);
    await until(async () => (await jobs(desktop)).length === 3);

    const revokedAt = performance.now();
    const unpaired = await admin(desktop, "/pair/v1/unpair", { node: "laptop" });
    expect(unpaired).toMatchObject({ status: 200, json: { name: "laptop", already_revoked: false } });

    // The laptop's stream is cut: it ends soon, without the final event.
    const cut = await fromLaptop.rest;
    expect(performance.now() - revokedAt).toBeLessThan(CUT_BOUND_MS);
    expect(cut).not.toContain("data: [DONE]");
    // The whole chain let go: pc-3090's engine cancelled the request, and no Jobs list keeps it.
    await until(() => desktop.engine!.stats().cancelled === 1, CUT_BOUND_MS);
    await until(async () => (await jobs(laptop)).length === 0, CUT_BOUND_MS);
    await until(
      async () => (await jobs(desktop)).filter((j) => j.origin_node === "laptop").length === 0,
      CUT_BOUND_MS,
    );
    await until(async () => (await historyOf(desktop)).some((r) => r.origin_node === "laptop"), CUT_BOUND_MS);
    // pc-3090 records it cancelled (its client, the laptop's link, went away); the laptop records
    // the attempt on pc-3090 failed.
    expect((await historyOf(desktop)).find((r) => r.origin_node === "laptop")).toMatchObject({
      status: "cancelled",
      serving_node: "pc-3090",
    });
    await until(async () => (await historyOf(laptop)).length === 1, CUT_BOUND_MS);
    expect((await historyOf(laptop))[0]).toMatchObject({ status: "failed", error_code: "upstream_error" });

    // The revoked certificate is refused during the TLS handshake: no HTTP answer at all.
    const revokedAgent = agentBetween(laptop, desktop);
    defer(() => revokedAgent.destroy());
    const refusal = await peerHello(desktop, revokedAgent).then(
      (answer) => ({ answered: answer.status }),
      (error: Error & { code?: string }) => ({ error: `${error.code ?? ""} ${error.message}` }),
    );
    // TLS 1.3 checks the client certificate after the client's handshake is done, so undici sees
    // the connection closed before any answer (UND_ERR_SOCKET), never an HTTP status.
    expect(refusal).toEqual({ error: expect.stringMatching(/UND_ERR_SOCKET|ECONNRESET|alert/) as string });
    expect(peersOf(desktop).map((p) => p.name)).toEqual(["tablet"]);

    // A client of the laptop asking for the model gets a clean JSON error, not a hang or a 5xx crash
    // page: the laptop can no longer reach the only node that serves it.
    const next = await request(`${laptop.node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }] }),
    });
    const nextBody = (await next.body.json()) as { error?: { code?: string; message?: string } };
    // Right after the revocation the laptop still lists pc-3090 up (502 upstream_error naming
    // pc-3090); once its membership poll fails, the model is gone from its view (404).
    expect([502, 404], JSON.stringify(nextBody)).toContain(next.statusCode);
    expect(nextBody.error?.code, JSON.stringify(nextBody)).toMatch(/^(upstream_error|model_not_found)$/);
    if (next.statusCode === 502)
      expect(nextBody.error?.message).toMatch(/pc-3090 failed: .*no longer trusts this node/);
    // And the laptop's view of the cluster says why pc-3090 is down.
    await until(async () => {
      const rows = (await admin(laptop, "/pair/v1/nodes")).json as { name: string; last_error?: string }[];
      return /no longer trusts this node/.test(rows.find((r) => r.name === "pc-3090")?.last_error ?? "");
    }, CUT_BOUND_MS);

    // Nothing else on pc-3090 was touched: the other two streams finish, the tablet still reaches it.
    for (const other of [await fromTablet.rest, await local.rest]) {
      expect(other).toContain("data: [DONE]");
      expect(other).not.toContain("<broken");
    }
    const tabletAgent = agentBetween(tablet, desktop);
    defer(() => tabletAgent.destroy());
    expect((await peerHello(desktop, tabletAgent)).status).toBe(200);
    expect(desktop.engine!.stats().completed).toBe(2);
  });

  it("a revoked node's next forwarded request gets a 502 saying the peer no longer trusts it, and the peer is marked down", async () => {
    const desktop = await node("pc-3090", { models: [MODEL] });
    // Membership polls rarely here, so the laptop still lists pc-3090 up when its next request goes.
    const laptop = await node("laptop", { refreshMs: 60_000, timeoutMs: 2_000 });
    await pair(laptop, desktop);
    await sees(laptop, MODEL);
    expect((await admin(desktop, "/pair/v1/unpair", { node: "laptop" })).status).toBe(200);

    const ask = async () => {
      const res = await request(`${laptop.node.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }] }),
      });
      return {
        status: res.statusCode,
        json: (await res.body.json()) as { error: { code: string; message: string } },
      };
    };
    const first = await ask();
    expect(first.status, JSON.stringify(first.json)).toBe(502);
    expect(first.json.error.code).toBe("upstream_error");
    expect(first.json.error.message).toMatch(/^node pc-3090 failed: .*no longer trusts this node.*pair join/);
    // Marked down at once: the next request is not sent to it, and `pair nodes` says why.
    const second = await ask();
    expect({ status: second.status, code: second.json.error.code }).toEqual({
      status: 404,
      code: "model_not_found",
    });
    const rows = (await admin(laptop, "/pair/v1/nodes")).json as { name: string; last_error?: string }[];
    expect(rows.find((r) => r.name === "pc-3090")?.last_error).toMatch(/no longer trusts this node/);
    expect(desktop.engine!.stats().requests).toBe(0);
  });
});
