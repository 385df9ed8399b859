// A node's stop in its order (stages/stage.ts): peers hear "leaving" first, so they drop the node at
// once rather than at their next poll; a stream in flight is let finish within the grace, and the
// history closes after it, so its row is in the file.
import { join } from "node:path";
import Database from "better-sqlite3";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { cleanupAfterEach, until } from "../support/eventually.js";
import { joinWith, showPin, startTestNodeWith, type TestNode } from "./node-pair-harness.js";

const cleanup = cleanupAfterEach();

// Peers poll each other only every minute here: anything sooner is the stop's own notice.
const SLOW_POLL = { refreshMs: 60_000, timeoutMs: 400 };

async function node(name: string, options: Parameters<typeof startTestNodeWith>[1]): Promise<TestNode> {
  const n = await startTestNodeWith(name, options);
  cleanup(() => n.close());
  return n;
}

describe("a node's stop", () => {
  it("tells its peers first: they mark it down at once, not at their next poll", async () => {
    const laptop = await node("laptop", { models: ["llama3:8b"], ...SLOW_POLL });
    const desktop = await node("pc-3090", { models: ["qwen:32b"], ...SLOW_POLL });
    expect((await joinWith(laptop, desktop, await showPin(desktop))).status).toBe(200);
    const seen = () => laptop.node.membership.members().find((m) => m.name === "pc-3090");
    await until(() => seen()?.state === "up");

    await desktop.stop();
    await until(() => seen()?.state === "down", 2_000);
    expect(seen()).toMatchObject({ state: "down", models: [], last_error: "it said it is shutting down" });
  });

  it("lets a stream in flight finish within the grace, and records it before the history closes", async () => {
    const n = await node("laptop", { models: ["llama3:8b"], tokenDelayMs: 40, maxTokens: 10 });
    const answer = await request(`${n.node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "llama3:8b",
        stream: true,
        messages: [{ role: "user", content: "hi" }],
      }),
    });
    expect(answer.statusCode).toBe(200);
    await until(() => n.node.history.running().length === 1);

    const [body] = await Promise.all([answer.body.text(), n.node.close(5_000)]);
    expect(body).toContain("data: [DONE]");
    const db = new Database(join(n.dataDir, "history.db"), { readonly: true });
    try {
      expect(db.prepare("SELECT model, status FROM workloads").all()).toEqual([
        { model: "llama3:8b", status: "completed" },
      ]);
    } finally {
      db.close();
    }
  });
});
