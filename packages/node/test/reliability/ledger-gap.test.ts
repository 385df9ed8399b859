// Was a known gap, now closed: when the sponsor goes away while its managed endpoint is still
// `pending` (observed not charging) and the endpoint then starts billing (initializing → running)
// before the sponsor is back, the ledger used to bill the time it was down by that last observation —
// idle — so those minutes never reached the ledger, although the provider charged them. Found by the
// crash tests (crash-managed.test.ts); shown here in process on the emulator's virtual clock,
// deterministic. The ledger now bills an outage by the cautious rule (packages/ledger/src/outage.ts):
// charging at the first observation after the restart bills the whole outage as charging.
// Needs the OS credential store: run through `bash scripts/test.sh`.
import { granulesCostMicroUsd } from "@pair/ledger";
import { describe, expect, it } from "vitest";
import { managedWorld, MIN, NODE, type ManagedWorld } from "../rented/managed-harness.js";
import { keyringWorlds } from "../support/keyring-worlds.js";

const L4_MICRO_USD_PER_HOUR = 800_000;
const worlds = keyringWorlds<ManagedWorld>();

describe("ledger after a sponsor outage that began before the endpoint billed", () => {
  it("bills the minutes the endpoint charged while the sponsor was down (ledger = meter)", async () => {
    const lifecycle = "    lifecycle: { pause_on_sponsor_exit: false, idle_pause_min: 3 }";
    // Adopted while pending: observed, not charging.
    const w = worlds.add(await managedWorld(worlds.ca, [lifecycle], [], { endpoint: {}, start: true }));
    await w.node.close(200);
    w.hf.advance(10 * MIN); // initializing, then running: billed while the sponsor is down
    await w.start();
    await w.advance(5 * MIN); // idle pause
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
    const minutes = w.hf.meter.billedMinutes("alice", "qwen");
    expect(minutes).toBe(13);
    // Before the fix the ledger had 3 minutes ($0.04): the 10 minutes of the outage were missing.
    expect(w.node.managed.view(NODE)?.spend_usd?.total).toBe(
      granulesCostMicroUsd(minutes, MIN, L4_MICRO_USD_PER_HOUR) / 1e6,
    );
  });
});
