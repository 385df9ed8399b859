// A forwarded request and its peer's health: when membership finds the peer down (here: marked down
// by hand, as a failed poll would), a request that heard nothing from the peer for the poll's
// timeout is given up — before the first byte a clean 502, not a wait for the 120 s first-byte
// timeout — while a stream still flowing from it is left alone (a busy peer that misses one poll
// keeps its live streams).
import { describe, expect, it } from "vitest";
import type { WorkloadJson } from "../../src/history/workload-history.js";
import { cleanupAfterEach, until } from "../support/eventually.js";
import { admin, joinWith, showPin, startTestNodeWith, type TestNode } from "./node-pair-harness.js";
import { postChat } from "../support/chat.js";

const defer = cleanupAfterEach();
/** The laptop's poll timeout: the silence a request to a down peer is allowed. */
const TIMEOUT_MS = 400;

async function pairedNodes(): Promise<{ laptop: TestNode; desktop: TestNode; desktopId: string }> {
  // Polls a minute apart: only this test marks the desktop down.
  const laptop = await startTestNodeWith("laptop", { refreshMs: 60_000, timeoutMs: TIMEOUT_MS });
  defer(() => laptop.close());
  const desktop = await startTestNodeWith("pc-3090", {
    models: ["qwen:32b"],
    maxTokens: 100,
    tokenDelayMs: 20,
  });
  defer(() => desktop.close());
  expect((await joinWith(laptop, desktop, await showPin(desktop))).status).toBe(200);
  await until(async () => {
    const rows = (await admin(laptop, "/pair/v1/models")).json as { model: string; nodes: string[] }[];
    return rows.some((r) => r.model === "qwen:32b" && r.nodes.includes("pc-3090"));
  });
  return { laptop, desktop, desktopId: desktop.node.cluster.identity.nodeId };
}

const chat = (laptop: TestNode) =>
  postChat(laptop.node.url, { model: "qwen:32b", stream: true, signal: AbortSignal.timeout(10_000) });

describe("a forwarded request when its peer is found down", () => {
  it("keeps a stream that is still flowing (the peer answers, it only missed a poll)", async () => {
    const { laptop, desktopId } = await pairedNodes();
    const res = await chat(laptop);
    expect(res.statusCode).toBe(200);
    let text = "";
    let marks = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      text += chunk.toString("utf8");
      // Tokens come every 20 ms, well inside the 400 ms window: being found down must not cut it.
      if (marks < 3 && text.length > 200 * (marks + 1)) {
        marks += 1;
        laptop.node.membership.markDown(desktopId, "missed a poll (test)");
      }
    }
    expect(marks).toBe(3);
    expect(text.trim().endsWith("data: [DONE]")).toBe(true);
  });

  it("gives up a request the peer has been silent on for the window: a clean 502 at once, not after the first-byte timeout", async () => {
    const { laptop, desktop, desktopId } = await pairedNodes();
    await desktop.engine!.setFaults({ hangBeforeFirstByte: true }); // the desktop waits on its engine
    const started = performance.now();
    const pending = chat(laptop);
    let settled = false;
    void pending.then(
      () => (settled = true),
      () => (settled = true),
    );
    await until(() => desktop.engine!.stats().requests === 1, 3_000);
    laptop.node.membership.markDown(desktopId, "missed a poll (test)"); // silent for less than the window
    await new Promise((r) => setTimeout(r, TIMEOUT_MS + 100));
    expect(settled).toBe(false); // still waiting: it had not been silent for the window yet
    laptop.node.membership.markDown(desktopId, "missed a poll (test)"); // now silent for longer
    const res = await pending;
    const tookMs = performance.now() - started;
    expect(res.statusCode).toBe(502);
    expect(((await res.body.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "upstream_error",
      message: expect.stringContaining("sent nothing for 400 ms") as unknown,
    });
    expect(tookMs).toBeLessThan(3_000);
    await until(async () => ((await admin(laptop, "/pair/v1/jobs")).json as unknown[]).length === 0, 2_000);
    const [row] = (await admin(laptop, "/pair/v1/history")).json as WorkloadJson[];
    expect(row).toMatchObject({
      status: "failed",
      error_code: "upstream_error",
      attempts: [{ target: "node pc-3090", error: "upstream_error" }],
    });
    // The whole chain lets go: the desktop's request to its engine is cancelled too.
    await until(() => desktop.engine!.stats().cancelled === 1, 3_000);
  });
});
