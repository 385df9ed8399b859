// The start's bound on the managed nodes' first pass (startNode's `managedFirstPassWaitMs`, default
// MANAGED_FIRST_PASS_WAIT_MS), shown in process with the Hugging Face emulator holding the pass's
// first endpoint read unanswered: a pass that hangs does not keep the node from serving beyond the
// bound (it goes on in the background and adopts the endpoint once answered); a pass that settles
// within the bound is waited for (the node serves with its result in place).
// Needs the OS credential store: run through `bash scripts/test.sh`.
import { openObligations } from "@pair/provision";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { MANAGED_FIRST_PASS_WAIT_MS } from "../../src/node.js";
import { until } from "../support/eventually.js";
import { keyringWorlds } from "../support/keyring-worlds.js";
import { managedWorld, NODE, type ManagedWorld } from "./managed-harness.js";

/** The pass's reads of alice's endpoints (the emulator holds the first one). */
const ENDPOINT_READS = { method: "GET", path: /^\/v2\/endpoint\// } as const;
/** The shortened bound of the hanging case (real ms). */
const BOUND_MS = 300;
/** How long the settling case keeps the read held, well within the default bound (real ms). */
const HELD_MS = 400;

const worlds = keyringWorlds<ManagedWorld>((w) => w.hf.faults.clear());

/** A sponsor (not started) whose managed endpoint is running: its first pass adopts it. */
const world = async () => worlds.add(await managedWorld(worlds.ca, [], [], { endpoint: { running: true } }));

/** The managed node's deployment records holding alice/qwen: one once the first pass adopted it. */
function adopted(w: ManagedWorld) {
  const deployments = w.node.managed.node(NODE)?.controller.state.deployments ?? {};
  return Object.values(deployments).filter((d) => d.key?.name === "qwen");
}

const stillWaits = (w: ManagedWorld) => w.log.filter((l) => l.includes("first pass still waits"));

describe("the start's bound on the managed nodes' first pass", () => {
  it("a first pass that hangs does not keep the node from serving beyond the bound; it adopts in the background", async () => {
    const w = await world();
    w.hf.faults.holdNext(1, ENDPOINT_READS);
    const startedMs = performance.now();
    await w.start({ firstPassWaitMs: BOUND_MS });
    const tookMs = performance.now() - startedMs;

    // The start returned while the pass's read is still held: only the bound can have ended the wait.
    expect(w.hf.faults.heldCount).toBe(1);
    expect(tookMs).toBeGreaterThanOrEqual(BOUND_MS - 5); // timers may fire a few ms early
    // Well under the default bound (the rest of the start takes a few hundred ms): the given bound applies.
    expect(tookMs).toBeLessThan(MANAGED_FIRST_PASS_WAIT_MS);
    expect(adopted(w)).toEqual([]);
    expect(stillWaits(w)).toEqual([
      "managed rented nodes: their first pass still waits for a provider after 0.3 s; " +
        "serving meanwhile (it goes on in the background)",
    ]);
    const served = await request(`${w.node.url}/v1/models`);
    expect(served.statusCode).toBe(200); // not "PAIR is starting" (503)
    await served.body.dump();

    w.hf.faults.releaseHeld("apply");
    await until(() => adopted(w).length === 1);
    expect(openObligations(w.node.managed.node(NODE)!.controller.state)).toHaveLength(1);
  });

  it("a first pass that settles within the bound is waited for: the node serves with its result in place", async () => {
    expect(HELD_MS).toBeLessThan(MANAGED_FIRST_PASS_WAIT_MS);
    const w = await world();
    w.hf.faults.holdNext(1, ENDPOINT_READS);
    let serving = false;
    const starting = w.start().then(() => (serving = true)); // the default bound
    await w.hf.faults.whenHeld();
    await new Promise((r) => setTimeout(r, HELD_MS));
    expect(serving).toBe(false);

    w.hf.faults.releaseHeld("apply");
    await starting;
    expect(adopted(w)).toHaveLength(1);
    expect(w.node.managed.view(NODE)).toMatchObject({
      managed: true,
      usd_per_hour: 0.8,
      open_obligations: 1,
    });
    expect(stillWaits(w)).toEqual([]);
  });
});
