// A `--rent auto` rental whose Job fails (ERROR) before it serves: the lines that waited for it do
// not wait until the deadline — with no other node for the model they end at once with the
// routing's clear error; with a cluster they run on it — the failure is in the batch's events, the
// rental is stopped for good (nothing bills after the ERROR), and no second GPU is rented.
import { afterEach, describe, expect, it } from "vitest";
import { RentalWorld } from "./rental-world.js";

const worlds: RentalWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.close();
});

function world(clusterServes: boolean): RentalWorld {
  const w = new RentalWorld({ clusterLineMs: 5_000, rentedLineMs: 1_000, clusterServes });
  worlds.push(w);
  return w;
}

describe("a rented Job that fails while lines wait for it", () => {
  it("ends the waiting lines at once when no other node serves the model", async () => {
    const w = world(false);
    const id = await w.submit(100, 100, { deadlineS: 1_800 });
    await w.advance(120_000);
    expect(w.store.counts(id)).toMatchObject({ completed: 0, failed: 0 });
    const gpu = w.failRented();
    // The next pass (5 s) sees the ERROR; the lines that waited end within a second of it.
    await w.advance(7_000);
    expect(w.store.batch(id)?.status).toBe("completed");
    expect(w.store.counts(id)).toMatchObject({ total: 100, completed: 0, failed: 100 });
    const errors = w.store.results(id).errors.map((l) => JSON.parse(l) as { error: { code: string } });
    expect(errors).toHaveLength(100);
    expect(new Set(errors.map((e) => e.error.code))).toEqual(new Set(["model_not_found"]));
    // Recorded as failed, stopped for good on the ERROR's evidence, billed to the ERROR, not rented again.
    await w.advance(10_000);
    const r = w.store.rentals.get(id)!;
    expect(r).toMatchObject({ state: "stopped", stopReason: "the rented job failed: the job errored" });
    expect(w.events.filter((e) => e.batchId === id).map((e) => e.event)).toEqual([
      "rent",
      "rental failed",
      "completed",
      "rental stop confirmed",
    ]);
    expect(w.events.find((e) => e.event === "rental failed")?.reason).toBe(
      `rented node ${gpu.name}: the rented job failed: the job errored`,
    );
    expect(r.spentUsd).toBeCloseTo((w.billedMinutes(gpu) * gpu.usdPerHour) / 60, 10);
    expect(w.billedMinutes(gpu)).toBe(2);
    expect(w.rented).toHaveLength(1);
  });

  it("sends the lines to the cluster when it serves the model, and rents no second GPU", async () => {
    const w = world(true);
    // 10,000 lines × 100 tokens: the cluster alone misses 30 min; the GPU fails before it serves.
    const id = await w.submit(10_000, 100, { deadlineS: 1_800 });
    expect(w.rented).toHaveLength(1);
    await w.advance(60_000);
    w.failRented();
    await w.advance(10_000);
    expect(w.store.rentals.get(id)?.state).toBe("stopped");
    await w.advance(600_000);
    expect(w.rented).toHaveLength(1);
    expect(w.served.get(w.rented[0]!.name)).toBeUndefined();
    expect(w.store.counts(id).completed).toBeGreaterThan(0);
    expect(w.store.rentals.get(id)?.stopReason).toBe("the rented job failed: the job errored");
  });
});
