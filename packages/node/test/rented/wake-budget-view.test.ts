// Eligibility shown = eligibility routed: a managed node whose next start would cost more than its
// remaining budget is refused with budget_exceeded, on the sponsor and through a peer, and
// `pair nodes --json` on both shows it ineligible with a budget reason; nothing reaches the provider.
// - a paused endpoint (wake on request on): one billing minute at $0.80/h is $0.0133, the budget $0.01;
// - a Hugging Face Jobs node with no job running: one minute of l4x1 against $0.005 a day;
// - a Runpod node with no pod: one second of its GPU against $0.0001 a day.
import type { RunningNode } from "../../src/node.js";
import { describe, expect, it } from "vitest";
import { admin, fastNodes, joinWith, sees, showPin, type TestNode } from "../cluster/node-pair-harness.js";
import { cleanupAfterEach } from "../support/eventually.js";
import { keyringWorlds } from "../support/keyring-worlds.js";
import { jobWorld, NODE as JOB_NODE, REPO as JOB_MODEL, type JobWorld } from "./job-harness.js";
import { managedWorld, MODEL, NODE, type ManagedWorld } from "./managed-harness.js";
import {
  NODE as POD_NODE,
  runpodWorld,
  SERVED as POD_MODEL,
  type RunpodNodeWorld,
} from "./runpod-harness.js";
import { chatReply } from "../support/chat.js";

const worlds = keyringWorlds<ManagedWorld | JobWorld | RunpodNodeWorld>();
const node = fastNodes(cleanupAfterEach());

/** The sponsor as the pairing helpers take a node. */
const asTestNode = (n: RunningNode) =>
  ({ node: n, clusterAddress: `127.0.0.1:${n.cluster.port}` }) as TestNode;

const chat = (url: string, model = MODEL) =>
  chatReply(url, { model, maxTokens: 3 }).then((r) => ({
    status: r.status,
    code: r.json<{ error?: { code?: unknown } }>().error?.code,
  }));

async function rentedRow(n: TestNode, name = NODE): Promise<Record<string, unknown> | undefined> {
  const rows = (await admin(n, "/pair/v1/nodes")).json as Record<string, unknown>[];
  return rows.find((r) => r["name"] === name);
}

/**
 * A request for `model` is refused with budget_exceeded on the sponsor and through a paired peer, and
 * both show node `name` ineligible for its budget in `pair nodes --json`.
 */
async function refusedAndShownOnBoth(sponsorNode: RunningNode, name: string, model: string): Promise<void> {
  const sponsor = asTestNode(sponsorNode);
  const laptop = await node("laptop");
  expect((await joinWith(laptop, sponsor, await showPin(sponsor))).status).toBe(200);
  await sees(laptop, model);
  for (const [who, url] of [
    ["sponsor", sponsorNode.url],
    ["peer", laptop.node.url],
  ] as const) {
    expect(await chat(url, model), who).toEqual({ status: 429, code: "budget_exceeded" });
    const row = await rentedRow(who === "sponsor" ? sponsor : laptop, name);
    expect(row?.["eligible"], who).toBe(false);
    expect(String(row?.["reason"]), who).toMatch(/budget/);
  }
}

describe("a paused managed endpoint that cannot afford one billing minute", () => {
  it("is refused with budget_exceeded and shown ineligible for it, on the sponsor and on a peer", async () => {
    const lines = ["    share_with_cluster: true", "    budget: { usd_per_day: 0.01 }"];
    const setup = { endpoint: { running: true, paused: true }, start: true };
    const w = worlds.add(await managedWorld(worlds.ca, lines, [], setup));
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

describe("a managed node with nothing running whose first billed unit does not fit its budget", () => {
  it("Hugging Face Jobs: refused with budget_exceeded and shown ineligible for it, on the sponsor and on a peer", async () => {
    const w = worlds.add(
      await jobWorld(worlds.ca, {
        lines: ["    share_with_cluster: true", "    budget: { usd_per_day: 0.005 }"],
      }),
    );
    await w.start();
    await w.node.jobs.tick();
    await refusedAndShownOnBoth(w.node, JOB_NODE, JOB_MODEL);
    expect(w.hf.jobs.list()).toHaveLength(0); // no job was ever run
  });

  it("Runpod: refused with budget_exceeded and shown ineligible for it, on the sponsor and on a peer", async () => {
    const w = worlds.add(
      await runpodWorld(worlds.ca, {
        lines: ["    share_with_cluster: true", "    budget: { usd_per_day: 0.0001 }"],
      }),
    );
    await w.start();
    await w.advance(1_000, 1_000);
    await refusedAndShownOnBoth(w.node, POD_NODE, POD_MODEL);
    expect(w.emu.pods.list()).toHaveLength(0); // no pod was ever created
  });
});
