// Eligibility shown = eligibility routed: a paused managed endpoint (wake on request on) whose wake
// would cost more than its remaining budget (one billing minute at $0.80/h is $0.0133, the budget
// $0.01 a day) is refused with budget_exceeded, on the sponsor and through a peer; `pair nodes --json`
// on both shows it ineligible with a budget reason, and no resume reaches Hugging Face.
import type { RunningNode } from "../../src/node.js";
import { describe, expect, it } from "vitest";
import { admin, fastNodes, joinWith, sees, showPin, type TestNode } from "../cluster/node-pair-harness.js";
import { cleanupAfterEach } from "../support/eventually.js";
import { keyringWorlds } from "../support/keyring-worlds.js";
import { managedWorld, MIN, MODEL, NODE, SPEC, type ManagedWorld } from "./managed-harness.js";

const worlds = keyringWorlds<ManagedWorld>();
const node = fastNodes(cleanupAfterEach());

/** The sponsor as the pairing helpers take a node. */
const asTestNode = (n: RunningNode) =>
  ({ node: n, clusterAddress: `127.0.0.1:${n.cluster.port}` }) as TestNode;

async function chat(url: string): Promise<{ status: number; code: unknown }> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 3 }),
  });
  const body = (await res.json()) as { error?: { code?: unknown } };
  return { status: res.status, code: body.error?.code };
}

async function rentedRow(n: TestNode): Promise<Record<string, unknown> | undefined> {
  const rows = (await admin(n, "/pair/v1/nodes")).json as Record<string, unknown>[];
  return rows.find((r) => r["name"] === NODE);
}

describe("a paused managed endpoint that cannot afford one billing minute", () => {
  it("is refused with budget_exceeded and shown ineligible for it, on the sponsor and on a peer", async () => {
    const w = worlds.add(
      await managedWorld(worlds.ca, ["    share_with_cluster: true", "    budget: { usd_per_day: 0.01 }"]),
    );
    await w.api.createEndpoint("alice", SPEC);
    w.hf.advance(2 * MIN);
    await w.api.pause("alice", "qwen");
    await w.start();
    await w.node.managed.tick();
    const sponsor = asTestNode(w.node);
    const laptop = await node("laptop");
    expect((await joinWith(laptop, sponsor, await showPin(sponsor))).status).toBe(200);
    await sees(laptop, MODEL);
    const resumes = () => w.hf.controlRequests().filter((r) => r.path.includes("/resume")).length;
    const before = resumes();

    for (const [who, url] of [
      [sponsor, w.node.url],
      [laptop, laptop.node.url],
    ] as const) {
      const refused = await chat(url);
      expect(refused, who === sponsor ? "sponsor" : "peer").toEqual({ status: 429, code: "budget_exceeded" });
      const row = await rentedRow(who);
      expect(row?.["eligible"], who === sponsor ? "sponsor" : "peer").toBe(false);
      expect(String(row?.["reason"])).toMatch(/budget/);
    }
    expect(resumes()).toBe(before);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
  });
});
