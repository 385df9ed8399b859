// A restarted sponsor whose live Runpod pod bills on while the Runpod API (the GPU catalogue, the pod's
// own cost) cannot be read for 5 virtual minutes: the ledger keeps the price it had and bills the pod
// through, at or above the emulator's meter. The Runpod node takes its price back from the ledger's
// reservation at start, and the ledger keeps a reservation's price while the node knows none; a Jobs
// node did neither and billed minutes at 0 after a restart (docs/reliability.md, "Hugging Face Jobs";
// job-restart-price.test.ts). Real keyring, virtual time (the emulator's clock).
import { describe, expect, it } from "vitest";
import { chat, COLD_START_MS, NODE, podLines, runpodWorld, type RunpodNodeWorld } from "./runpod-harness.js";
import { keyringWorlds } from "../support/keyring-worlds.js";

const worlds = keyringWorlds<RunpodNodeWorld>();

function ledgerMicroUsd(w: RunpodNodeWorld): number {
  return Math.round((w.node.runpod.node(NODE)?.view().spend_usd?.total ?? 0) * 1e6);
}

describe("managed Runpod node: the price across a restart", () => {
  it("a restart that cannot read the Runpod API for 5 min bills the live pod at its price, not 0: ledger ≥ meter", async () => {
    const w = worlds.add(
      await runpodWorld(worlds.ca, {
        pod: podLines(60),
        lifecycle: "{ pause_on_sponsor_exit: false }",
      }),
    );
    await w.start();
    expect((await w.advanceUntil(chat(w, false), COLD_START_MS + 60_000)).status).toBe(200);
    const podId = w.emu.pods.list()[0]?.wire.id ?? "";
    await w.node.close(200); // a crash: the pod runs on
    expect(w.emu.pods.get(podId)?.wire.status).toBe("RUNNING");

    w.emu.faults.failNextCalls(1_000_000, 503);
    w.emu.faults.failCatalog(true, 503);
    await w.start();
    await w.advance(5 * 60_000, 10_000);
    w.emu.faults.clear();
    w.emu.faults.failCatalog(false);
    await w.advance(60_000, 10_000); // passes see the pod (and its price) again
    expect(w.emu.pods.get(podId)?.wire.status).toBe("RUNNING");

    const meter = w.emu.meter.totalMicroUsd(podId);
    const ledger = ledgerMicroUsd(w);
    expect(meter).toBeGreaterThan(0);
    // Per-second billing: the ledger may round within a second's price of the meter, never less.
    const perSecond = 2_000_000 / 3600;
    expect(ledger, `ledger ${ledger} µUSD ≥ meter ${meter} µUSD`).toBeGreaterThanOrEqual(meter - perSecond);
  });
});
