// JSON nested to overflow the stack, sent to a paired node's peer route over mTLS (as a buggy or
// hostile peer would relay it) and to the client port of the node that would forward it: a 400
// invalid_request on both, never a 500, and no workload left running on either node.
import { request, type Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  admin,
  agentBetween,
  joinWith,
  showPin,
  startTestNode,
  startTestNodeWith,
  type TestNode,
} from "../cluster/node-pair-harness.js";
import { until } from "../support/eventually.js";

const MODEL = "qwen:0.5b";
let server: TestNode; // has the engine
let laptop: TestNode; // paired with `server`, no engine: forwards to it
let agent: Agent;

beforeAll(async () => {
  [server, laptop] = await Promise.all([
    startTestNodeWith("gpu-box", { models: [MODEL] }),
    startTestNode("laptop"),
  ]);
  const joined = await joinWith(laptop, server, await showPin(server));
  if (joined.status !== 200) throw new Error(`pairing failed: ${JSON.stringify(joined.json)}`);
  agent = agentBetween(laptop, server);
  await until(
    async () => JSON.stringify((await admin(laptop, "/pair/v1/models")).json).includes(MODEL),
    10_000,
  );
});

afterAll(async () => {
  await agent?.destroy();
  await Promise.all([server?.close(), laptop?.close()]);
});

/** A chat whose tool's parameters nest `depth` objects deep. */
const deepChat = (depth: number) =>
  `{"model":"${MODEL}","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function",` +
  `"function":{"name":"f","parameters":${'{"x":'.repeat(depth - 1)}{}${"}".repeat(depth - 1)}}}]}`;

describe("JSON nested 200,000 deep", () => {
  it("on the peer route: 400 invalid_request in the client's dialect, nothing running", async () => {
    // The engine's count before, not 0: the other test sends it a sane body, in whatever order they run.
    const before = server.engine?.stats().requests;
    for (const route of ["/v1/chat/completions", "/api/chat"]) {
      const res = await request(`https://127.0.0.1:${server.node.cluster.port}/pair/v1/peer/route${route}`, {
        dispatcher: agent,
        method: "POST",
        headers: { "content-type": "application/json", "x-pair-requester": "local" },
        body: deepChat(200_000),
      });
      const text = await res.body.text();
      expect([route, res.statusCode]).toEqual([route, 400]);
      expect(text).toContain("invalid_request");
    }
    expect((await admin(server, "/pair/v1/jobs")).json).toEqual([]);
    expect(server.engine?.stats().requests).toBe(before);
  });

  it("on the forwarding node's client port: 400 before anything is forwarded; a sane body still is", async () => {
    const res = await fetch(`${laptop.node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: deepChat(200_000),
    });
    expect(res.status).toBe(400);
    expect((await admin(laptop, "/pair/v1/jobs")).json).toEqual([]);
    expect((await admin(server, "/pair/v1/jobs")).json).toEqual([]);
    const ok = await fetch(`${laptop.node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: deepChat(50),
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-pair-served-by")).toBe("gpu-box");
  });
});
