// `--rent auto` in virtual time: a 10,000-line batch the cluster (two nodes, 160 tokens/s) would
// finish in 6,250 s against a 30 min deadline rents the cheapest Jobs GPU in time (A100), spreads
// over both nodes and the GPU, and stops the rental when the batch is done, billed per started
// minute as spent; a deadline the cluster meets rents nothing; a budget that runs out stops the
// rental before the next minute passes it and the rest expires unfinished; a cancel stops it.
import { afterEach, describe, expect, it } from "vitest";
import { planBatch, planRental, type InputLine } from "../../src/batch/index.js";
import { GPUS, MODEL, RentalWorld } from "./rental-world.js";

const worlds: RentalWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.close();
});

/** Cluster lines: 20 tokens/s (as assumed); the GPU's: 100 tokens/s. `tokens` a line. */
function world(tokens = 100): RentalWorld {
  const w = new RentalWorld({ clusterLineMs: tokens * 50, rentedLineMs: tokens * 10 });
  worlds.push(w);
  return w;
}

const ended = (w: RentalWorld, id: string) => () =>
  ["completed", "cancelled", "expired"].includes(w.store.batch(id)?.status ?? "");

describe("pair batch submit --rent auto", () => {
  it("rents the GPU that finishes in time, spreads over two nodes and it, and stops it when done", async () => {
    const w = world();
    const id = await w.submit(10_000, 100, { deadlineS: 1_800 });
    // T4 and L4 finish after the deadline; the A100 (1,800 tokens/s assumed) in about 1,061 s.
    expect(w.rented).toHaveLength(1);
    const gpu = w.rented[0]!;
    expect(gpu).toMatchObject({ flavor: "a100-large", windowMin: 30, budgetUsd: null });
    expect(w.store.rentals.get(id)).toMatchObject({ state: "renting", node: gpu.name });

    await w.advance(3_600_000, () => w.store.rentals.get(id)?.state === "stopped");
    const b = w.store.batch(id)!;
    expect(b.status).toBe("completed");
    expect(w.store.counts(id)).toMatchObject({ total: 10_000, completed: 10_000, failed: 0 });
    expect(w.served.get("a")).toBeGreaterThan(0);
    expect(w.served.get("b")).toBeGreaterThan(0);
    expect(w.served.get(gpu.name)).toBeGreaterThan(5_000);
    const r = w.store.rentals.get(id)!;
    expect(r.stopReason).toBe("the batch finished");
    // Stopped the moment the batch was: within the pass of its end, before the deadline.
    expect(gpu.stoppedAtMs).toBe((b.completedAtS ?? 0) * 1000);
    expect(gpu.stoppedAtMs!).toBeLessThan(1_800_000);
    // Billed per started minute to the stop: what the rental says it spent.
    const billed = (w.billedMinutes(gpu) * gpu.usdPerHour) / 60;
    expect(w.billedMinutes(gpu)).toBe(Math.ceil(gpu.stoppedAtMs! / 60_000));
    expect(r.spentUsd).toBeCloseTo(billed, 10);
    // Measured: 100 tokens a second a line, 8 lines at once — not the A100's assumed 1,800.
    expect(r.measuredTokensPerS).toBe(800);
    expect(w.events.filter((e) => e.batchId === id).map((e) => e.event)).toEqual([
      "rent",
      "rental serving",
      "completed",
      "rental stopped",
      "rental stop confirmed",
    ]);
    expect(w.events[0]?.reason).toContain("a100-large (A100, $2.50/h)");
    expect(w.events.at(-1)?.reason).toBe(`rented node ${gpu.name} billed $${r.spentUsd.toFixed(4)}`);
  });

  it("with no local engine for the model, lines wait for the GPU while it starts, then all run on it", async () => {
    const w = new RentalWorld({ clusterLineMs: 5_000, rentedLineMs: 1_000, clusterServes: false });
    worlds.push(w);
    // 100 lines × 100 tokens: the cluster (were it serving) would need 63 s of a 30 min deadline.
    const id = await w.submit(100, 100, { deadlineS: 1_800 });
    expect(w.rented).toHaveLength(1);
    expect(w.events.find((e) => e.event === "rent")?.reason).toContain(
      `no node of the cluster serves ${MODEL}`,
    );
    // 10 min of start-up: every line was refused (404) at least once, none ended.
    await w.advance(590_000);
    expect(w.refused).toBeGreaterThan(100);
    expect(w.store.counts(id)).toMatchObject({ completed: 0, failed: 0 });
    await w.advance(3_600_000, () => w.store.rentals.get(id)?.state === "stopped");
    expect(w.store.batch(id)?.status).toBe("completed");
    expect(w.store.counts(id)).toMatchObject({ total: 100, completed: 100, failed: 0 });
    expect(w.served.get(w.rented[0]!.name)).toBe(100);
    // Never stopped early for a cluster that cannot serve the model: only the batch's end stops it.
    expect(w.store.rentals.get(id)?.stopReason).toBe("the batch finished");
  });

  it("counts no node an earlier batch rented as the cluster's, however fast it was", async () => {
    const w = world();
    // An earlier batch's rented node (stopped now) gave the model 1,000 tokens/s a line.
    w.store.rentals.add({
      batchId: "batch_old",
      model: MODEL,
      credential: null,
      deadlineAtS: 0,
      budgetUsd: null,
    });
    w.store.rentals.update("batch_old", { state: "stopped", node: "batch-old" });
    for (let i = 0; i < 10; i++)
      w.history.push({
        model: MODEL,
        serving_node: "batch-old",
        status: "completed",
        tokens_out: 1_000,
        duration_ms: 1_000,
      });
    // At that rate the cluster would need 125 s; at its own (assumed) 160 tokens/s, 6,250 s.
    await w.submit(10_000, 100, { deadlineS: 1_800 });
    expect(w.rented).toHaveLength(1);
    expect(w.events.find((e) => e.event === "rent")?.reason).toContain(
      "the cluster alone needs about 6250 s",
    );
  });

  it("rents nothing when the cluster alone meets the deadline", async () => {
    const w = world();
    const id = await w.submit(100, 100, { deadlineS: 3_600 });
    await w.advance(600_000, ended(w, id));
    await w.advance(10_000);
    expect(w.store.batch(id)?.status).toBe("completed");
    expect(w.rented).toEqual([]);
    expect(w.store.rentals.get(id)).toMatchObject({
      state: "stopped",
      node: null,
      stopReason: "nothing rented: the batch finished",
    });
    expect(w.events[0]).toMatchObject({ event: "plan" });
    expect(w.events[0]?.reason).toContain("the cluster alone finishes in time: nothing rented");
  });

  it("never rents for a batch without --rent, however late it runs", async () => {
    const w = world();
    const id = await w.submit(2_000, 500);
    await w.advance(120_000);
    expect(w.store.rentals.get(id)).toBeUndefined();
    expect(w.rented).toEqual([]);
  });

  it("a budget that runs out stops the rental before it is passed; the rest is reported unfinished", async () => {
    const w = world(500);
    // The A100's plan costs about $0.75 (at the assumed rate); at the measured one it would take $1.21.
    const id = await w.submit(2_000, 500, { deadlineS: 1_800, budgetUsd: 0.8 });
    const gpu = w.rented[0]!;
    expect(gpu).toMatchObject({ flavor: "a100-large", budgetUsd: 0.8 });
    await w.advance(3_600_000, ended(w, id));
    const r = w.store.rentals.get(id)!;
    expect(r.stopReason).toMatch(/^the budget of \$0\.80 is reached/);
    const billed = (w.billedMinutes(gpu) * gpu.usdPerHour) / 60;
    expect(billed).toBeLessThanOrEqual(0.8);
    expect(billed + gpu.usdPerHour / 60).toBeGreaterThan(0.8);
    expect(r.spentUsd).toBeCloseTo(billed, 10);
    // The cluster went on alone; what it could not run by the deadline expired.
    expect(w.store.batch(id)?.status).toBe("expired");
    const counts = w.store.counts(id);
    expect(counts.failed).toBeGreaterThan(0);
    expect(counts.completed + counts.failed).toBe(2_000);
    expect(w.store.results(id).errors.join("\n")).toContain("batch_expired");
  });

  it("cancelling the batch mid-way stops its rental", async () => {
    const w = world(500);
    const id = await w.submit(2_000, 500, { deadlineS: 1_800 });
    const gpu = w.rented[0]!;
    await w.advance(900_000);
    expect(w.store.rentals.get(id)?.state).toBe("serving");
    w.runner.cancel(id);
    await w.advance(60_000, () => w.store.rentals.get(id)?.state === "stopped");
    expect(w.store.batch(id)?.status).toBe("cancelled");
    expect(w.store.rentals.get(id)?.stopReason).toBe("the batch was cancelled");
    expect(gpu.stoppedAtMs).toBeLessThanOrEqual(901_000);
    expect(w.store.rentals.get(id)?.spentUsd).toBeCloseTo((w.billedMinutes(gpu) * gpu.usdPerHour) / 60, 10);
  });

  it("prices a GPU at its measured rate once a rented node of it served the model", () => {
    const lines: InputLine[] = Array.from({ length: 10_000 }, (_, i) => ({
      customId: `l${i}`,
      model: MODEL,
      body: JSON.stringify({ model: MODEL, max_tokens: 100 }),
    }));
    const plan = planBatch(lines, [], { deadlineS: 1_800, linesAtOnce: 8 });
    const assumed = planRental(plan, GPUS, undefined);
    const seen = planRental(plan, GPUS, undefined, { A100: 800 });
    const a100 = (p: typeof seen) => p.options.find((o) => o.flavor === "a100-large")!;
    expect(a100(assumed)).toMatchObject({ tokensPerS: 1_800, measured: false, meetsDeadline: true });
    expect(a100(seen)).toMatchObject({ tokensPerS: 800, measured: true });
    expect(a100(seen).seconds).toBeGreaterThan(a100(assumed).seconds);
  });
});
