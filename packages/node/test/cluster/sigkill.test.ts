// A peer killed with SIGKILL (no goodbye, no clean close) leaves the cluster's view within a bound,
// requests fail over to the other node serving the model without the client noticing, and the
// killed node rejoins when it starts again on the same data dir. The killed node is a real
// `pair serve` process.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEngineEmulator, type EngineEmulator } from "@pair/emulators";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorkloadJson } from "../../src/history/workload-history.js";
import { ServeChild } from "../support/serve-child.js";
import { untilValue as until } from "../support/eventually.js";
import { admin, startTestNodeWith, type TestNode } from "./node-pair-harness.js";

const REFRESH_MS = 1_000;
const TIMEOUT_MS = 400;

let engine: EngineEmulator;
let killed: ServeChild;
let laptop: TestNode;
let other: TestNode;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pair-sigkill-"));
  engine = await startEngineEmulator({
    api: "ollama",
    name: "killed-ollama",
    models: [{ name: "qwen:32b", maxTokens: 4 }],
  });
  killed = await ServeChild.create({ name: "pc-killed", dir, engineUrl: engine.url });
  [laptop, other] = await Promise.all([
    startTestNodeWith("laptop", { refreshMs: REFRESH_MS, timeoutMs: TIMEOUT_MS }),
    startTestNodeWith("pc-other", { models: ["qwen:32b"], refreshMs: REFRESH_MS, timeoutMs: TIMEOUT_MS }),
    killed.start(),
  ]);
});

afterAll(async () => {
  await killed?.kill();
  await laptop?.close();
  await other?.close();
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function modelNodes(n: TestNode, model: string): Promise<string[]> {
  const rows = (await admin(n, "/pair/v1/models")).json as { model: string; nodes: string[] }[];
  return rows.find((r) => r.model === model)?.nodes ?? [];
}

async function ask(n: TestNode): Promise<{ status: number; servedBy: unknown }> {
  const res = await request(`${n.node.url}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "qwen:32b", stream: false, messages: [{ role: "user", content: "hi" }] }),
  });
  await res.body.dump();
  return { status: res.statusCode, servedBy: res.headers["x-pair-served-by"] };
}

describe("a peer killed with SIGKILL", () => {
  it("leaves the inventory within the bound, requests fail over, and it rejoins on restart", async () => {
    // Pair the laptop with both nodes through the real PIN flow (the child over its admin API).
    const joinKilled = await admin(laptop, "/pair/v1/join", {
      address: killed.clusterAddress,
      pin: await killed.pin(),
    });
    expect(joinKilled.status).toBe(200);
    const otherPin = (await admin(other, "/pair/v1/pin", {})).json as { pin: string };
    expect(
      (await admin(laptop, "/pair/v1/join", { address: other.clusterAddress, pin: otherPin.pin })).status,
    ).toBe(200);
    await until(async () => (await modelNodes(laptop, "qwen:32b")).length === 2, 5_000);

    // Both serve it; the laptop spreads work over them.
    await killed.kill();
    const killedAt = Date.now();

    // At once, before the next poll noticed: the laptop still lists the killed node (first, as the
    // first paired), so the first request goes there, fails to connect, and fails over.
    const view = (await admin(laptop, "/pair/v1/nodes")).json as { name: string; state: string }[];
    const stillListed = view.find((n) => n.name === "pc-killed")?.state === "up";
    // Every request succeeds, served by the node left.
    for (let i = 0; i < 4; i++) expect(await ask(laptop)).toEqual({ status: 200, servedBy: "pc-other" });

    // Within a refresh plus a timeout (and scheduling slack), the killed node is down and gone from
    // the models view.
    await until(
      async () => {
        const nodes = (await admin(laptop, "/pair/v1/nodes")).json as { name: string; state: string }[];
        return nodes.find((n) => n.name === "pc-killed")?.state === "down";
      },
      REFRESH_MS + TIMEOUT_MS + 2_000,
    );
    expect(await modelNodes(laptop, "qwen:32b")).toEqual(["pc-other"]);
    const bound = Date.now() - killedAt;
    expect(bound).toBeLessThan(REFRESH_MS + TIMEOUT_MS + 2_000);

    // The history says so: the first request's first attempt failed on the killed node.
    const history = (await admin(laptop, "/pair/v1/history")).json as WorkloadJson[];
    expect(history).toHaveLength(4);
    expect(history.every((w) => w.status === "completed" && w.serving_node === "pc-other")).toBe(true);
    const failedOver = history.filter((h) => h.attempts.length > 1);
    expect(failedOver.length).toBe(stillListed ? 1 : 0);
    for (const w of failedOver)
      expect(w.attempts).toEqual([
        { target: "node pc-killed", error: "upstream_error" },
        { target: "node pc-other" },
      ]);

    // Restarted on the same data dir: same identity, so still paired; it is back and serves again.
    await killed.start();
    await until(async () => (await modelNodes(laptop, "qwen:32b")).includes("pc-killed"), 5_000);
    await other.engine!.setFaults({ failBeforeFirstByte: { status: 500 } });
    expect(await ask(laptop)).toEqual({ status: 200, servedBy: "pc-killed" });
  });
});
