// A managed endpoint whose engine never serves /v1 (HF's default image, the Inference Toolkit) bills
// while HF reports it running. PAIR must not route to it, a wake must not hand a request to it, and
// once it has billed for lifecycle.startup_deadline_min without its model on /v1/models it is paused
// through the contract (evidence closes the obligation) and no request wakes it again.
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { keyringWorlds } from "../support/keyring-worlds.js";
import { managedWorld, MIN, MODEL, NODE, SPEC, type ManagedWorld } from "./managed-harness.js";
import { chatReply } from "../support/chat.js";

const worlds = keyringWorlds<ManagedWorld>();
const TOOLKIT = { ...SPEC, framework: "pytorch", image: { huggingface: {} } };
const LINES = [
  "    timeouts: { cold_start_s: 2 }",
  "    lifecycle: { idle_pause_min: 240, startup_deadline_min: 10 }",
];

async function world(at: "running" | "paused"): Promise<ManagedWorld> {
  const endpoint = { spec: TOOLKIT, running: true, paused: at === "paused" };
  return worlds.add(await managedWorld(worlds.ca, LINES, [], { endpoint, start: true }));
}

const chat = (w: ManagedWorld) => chatReply(w.node.url, { model: MODEL, maxTokens: 3 });

async function rentedRow(w: ManagedWorld): Promise<Record<string, unknown>> {
  const res = await request(`${w.node.url}/pair/v1/rented`, {
    headers: { authorization: `Bearer ${w.node.adminToken}` },
  });
  const rows = (await res.body.json()) as Record<string, unknown>[];
  return rows.find((r) => r["name"] === NODE) ?? {};
}

/** Answer `pending` while moving the emulator's time, as a woken endpoint needs. */
async function whileTimeMoves<T>(w: ManagedWorld, pending: Promise<T>): Promise<T> {
  let done: { value: T } | undefined;
  void pending.then((value) => (done = { value }));
  for (let i = 0; i < 400 && done === undefined; i += 1) {
    w.hf.advance(5_000);
    await new Promise((r) => setTimeout(r, 25));
  }
  if (done === undefined) throw new Error("no answer");
  return done.value;
}

describe("a managed endpoint whose engine never serves /v1/models", () => {
  it("a wake hands it no request: the cold start ends in cold_start_timeout naming /v1/models", async () => {
    const w = await world("paused");
    const answer = await whileTimeMoves(w, chat(w));
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("running"); // HF says it runs…
    expect(answer.status).not.toBe(200); // …but PAIR never sent the chat to the Toolkit
    expect(answer.text).toContain("cold_start_timeout");
    expect(answer.text).toContain("/v1/models answered 404");
  });

  it("is not eligible while HF says running, and is paused at its startup deadline, for good", async () => {
    const w = await world("running");
    await w.node.managed.tick();
    await expect.poll(async () => (await rentedRow(w))["state"], { timeout: 5_000 }).toBe("unreachable");
    expect((await chat(w)).status).not.toBe(200);

    await w.advance(7 * MIN);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("running"); // within the deadline
    await w.advance(4 * MIN);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
    const view = w.node.managed.view(NODE);
    expect(view).toMatchObject({ paused_by: "unhealthy", open_obligations: 0 });
    expect(view?.last_error).toContain("startup_deadline_min");
    expect(w.log.join("\n")).toContain("without serving its model on /v1/models");

    // A request does not wake it again: that would bill another deadline for nothing.
    await expect.poll(async () => (await rentedRow(w))["state"], { timeout: 5_000 }).toBe("paused");
    const refused = await chat(w);
    expect(refused.text).toContain("rented_node_ineligible");
    await w.advance(MIN);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");

    // The user may try again (after fixing the image on Hugging Face).
    const resumed = await w.node.managed.act(NODE, "resume");
    expect(resumed).toEqual({ ok: true });
    expect(w.hf.endpoints.get("alice", "qwen")?.state).not.toBe("paused");
  });
});
