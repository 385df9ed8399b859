// The seed's validation plan (seed 001, "Validation approach"), steps 1–3, automated: two nodes on
// loopback (A sponsors a managed Hugging Face endpoint on the emulator over HTTPS, B is its paired
// peer), the real keyring. Run through `bash scripts/test.sh`.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { WorkloadJson } from "../../../src/history/workload-history.js";
import { runCli } from "../../cli/cli-harness.js";
import { until } from "../../support/eventually.js";
import { keyringWorlds } from "../../support/keyring-worlds.js";
import {
  adminOf,
  MIN,
  MODEL,
  nodeRow,
  RENTED,
  TOKEN,
  validationWorld,
  type ValidationWorld,
  type WorldOptions,
} from "./validation-world.js";
import { chatError, postChat } from "../../support/chat.js";

const worlds = keyringWorlds<ValidationWorld>();

async function world(options: WorldOptions = {}): Promise<ValidationWorld> {
  return worlds.add(await validationWorld(worlds.ca, options));
}

const chat = (url: string, stream = false) => postChat(url, { model: MODEL, stream, maxTokens: 4 });

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe("seed validation, steps 1–3", () => {
  it("seed step 1: attach and share — refused naming the node while unshared; served, streamed and in both nodes' Jobs once shared; the token absent from B", async () => {
    const w = await world({ tokenDelayMs: 40, maxTokens: 12 });
    await until(async () => (await nodeRow(w.b.node))?.["state"] === "running");
    expect(await nodeRow(w.b.node)).toMatchObject({ sponsor: "node-a", shared: false, off_lan: true });

    // Sharing off: B's request is refused, naming the rented node and how to share it.
    const refused = await chatError(await chat(w.b.node.url));
    expect(refused).toMatchObject({ status: 403, code: "rented_node_not_shared", node: RENTED });
    expect(refused.message).toContain(`pair rented share ${RENTED} on`);

    expect((await runCli(["rented", "share", RENTED, "on", "--config", w.aConfigFile])).code).toBe(0);
    await until(async () => (await nodeRow(w.b.node))?.["shared"] === true);

    // Sharing on: served and streamed; while it streams, both nodes' Jobs list it, served by gpu-hf.
    const res = await chat(w.b.node.url, true);
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-pair-served-by"]).toBe(RENTED);
    expect(res.headers["content-type"]).toContain("text/event-stream");
    const jobsOn = async (node: ValidationWorld["a"]) =>
      (await adminOf(node, "/pair/v1/jobs")) as WorkloadJson[];
    const seen = { a: false, b: false };
    const body = res.body.text();
    await until(async () => {
      seen.a ||= (await jobsOn(w.a)).some((j) => j.serving_node === RENTED && j.origin_node === "node-b");
      seen.b ||= (await jobsOn(w.b.node)).some((j) => j.serving_node === RENTED && j.sponsor === "node-a");
      return seen.a && seen.b;
    });
    const text = await body;
    expect(text.match(/^data: \{/gm)?.length).toBeGreaterThan(2);
    expect(text).toMatch(/data: \[DONE\]/);
    await until(async () => ((await adminOf(w.b.node, "/pair/v1/history")) as unknown[]).length === 2);
    const [bRow] = (await adminOf(w.b.node, "/pair/v1/history")) as WorkloadJson[];
    expect(bRow).toMatchObject({
      origin_node: "node-b",
      serving_node: RENTED,
      sponsor: "node-a",
      status: "completed",
    });

    // The token: nowhere in B's data dir (history flushed at close) or logs.
    const nodes = await runCli(["nodes", "--json", "--config", w.b.configFile]);
    await w.b.node.close(500);
    const texts = [
      ...filesUnder(w.b.dataDir).map((f) => readFileSync(f)),
      Buffer.from(w.b.log.join("\n")),
      Buffer.from(nodes.stdout + nodes.stderr),
    ];
    expect(filesUnder(w.b.dataDir).some((f) => f.endsWith("history.db"))).toBe(true);
    for (const t of texts) expect(t.includes(Buffer.from(TOKEN))).toBe(false);
  });

  it("seed step 2: cold start — a request to an endpoint scaled to zero is served after the cold start, past the old 120 s header timeout (scaled), with X-Scale-Up-Timeout", async () => {
    // 100 virtual ms per real ms: the old 120 s header timeout is 1.2 s here; the cold start is 180 s.
    const scale = 100;
    const w = await world({
      timeScale: scale,
      timings: { pendingMs: 1_000, initializingMs: 1_000, scaleUpMs: 180_000 },
      rentedLines: ["    lifecycle: { idle_pause_min: 600 }"],
      coldStartS: 600,
    });
    // HF scales the idle endpoint to zero (15 min here, 9 s real: moved along instead).
    w.hf.advance(16 * MIN);
    await until(() => w.hf.endpoints.get("alice", "qwen")?.state === "scaledToZero");
    const started = performance.now();
    const pending = chat(w.a.url);
    // The emulator holds the request only when it carries X-Scale-Up-Timeout (without it: 503 at once).
    await until(() => w.hf.endpoints.heldRequests("alice", "qwen") === 1, 2_000);
    const res = await pending;
    const elapsedMs = performance.now() - started;
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-pair-served-by"]).toBe(RENTED);
    await res.body.json();
    expect(elapsedMs).toBeGreaterThan(120_000 / scale);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("running");
  });

  it("seed step 3: idle pause and wake — paused after idle_pause_min; wake off → rented_node_paused naming the node; wake on → resumed and served", async () => {
    const off = await world({
      rentedLines: ["    lifecycle: { idle_pause_min: 5, wake_on_request: false }"],
    });
    await off.advance(4 * MIN);
    expect(off.hf.endpoints.get("alice", "qwen")?.state).toBe("running");
    await off.advance(90_000);
    // Hugging Face reports it paused (its API, as `hf endpoints describe` reads it).
    expect((await off.api.getEndpoint("alice", "qwen")).state).toBe("paused");
    await until(async () => (await nodeRow(off.a))?.["state"] === "paused");
    const refused = await chatError(await chat(off.a.url));
    expect(refused).toMatchObject({ status: 409, code: "rented_node_paused", node: RENTED });
    expect(refused.message).toContain(RENTED);
    expect(refused.message).not.toMatch(/inventory unavailable/);
    expect(off.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
    await off.cleanup();

    const on = await world({ rentedLines: ["    lifecycle: { idle_pause_min: 5 }"] });
    await on.advance(6 * MIN);
    expect(on.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
    await until(async () => (await nodeRow(on.a))?.["state"] === "paused");
    const pending = chat(on.a.url);
    let status: number | undefined;
    void pending.then((r) => (status = r.statusCode));
    for (let i = 0; i < 400 && status === undefined; i += 1) {
      on.hf.advance(5_000);
      await new Promise((r) => setTimeout(r, 25));
    }
    const res = await pending;
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-pair-served-by"]).toBe(RENTED);
    await res.body.json();
    expect(on.hf.endpoints.get("alice", "qwen")?.state).toBe("running");
  });
});
