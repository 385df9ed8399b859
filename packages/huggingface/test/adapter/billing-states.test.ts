// The emulator's billing meter against the adapter's declared charging states, at minute
// granularity: sample what the adapter reports every 10 virtual seconds through a lifecycle with
// starts, a pause, an idle scale-to-zero and a wake; every stretch the adapter calls charging,
// rounded up to started minutes, adds up to exactly the minutes (and micro-dollars) the meter billed.
// A configuration update while billed starts a new billed stretch on the emulator's meter (its
// documented rule), which no state shows: there the meter may exceed the adapter's count by one
// minute per update, never more, never less.
import { afterEach, describe, expect, it } from "vitest";
import { reportIsCharging, type ProviderCapabilities, type ResourceKey } from "@pair/provision";
import { HF_ENDPOINT_CAPABILITIES, capabilitiesFor } from "../../src/index.js";
import { MIN, NS, createRequest, startAdapterHarness, type AdapterHarness } from "./adapter-harness.js";

const STEP_MS = 10_000;
const L4_MICRO_USD_PER_HOUR = 800_000;

let h: AdapterHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Samples the adapter's view every STEP_MS and counts charging stretches the way HF bills them. */
class ChargeSampler {
  readonly stretches: { startMs: number; endMs: number | undefined }[] = [];
  readonly statuses: string[] = [];

  constructor(
    readonly harness: AdapterHarness,
    readonly key: ResourceKey,
    readonly caps: ProviderCapabilities,
  ) {}

  async sample(): Promise<void> {
    const outcome = await this.harness.provider.describe(this.key);
    const now = this.harness.emu.nowMs();
    const charging = outcome.kind === "found" && reportIsCharging(this.caps, outcome.report);
    if (outcome.kind === "found" && this.statuses.at(-1) !== outcome.report.status)
      this.statuses.push(outcome.report.status ?? "?");
    const open = this.stretches.at(-1);
    if (charging && (open === undefined || open.endMs !== undefined))
      this.stretches.push({ startMs: now, endMs: undefined });
    if (!charging && open !== undefined && open.endMs === undefined) open.endMs = now;
  }

  async run(ms: number): Promise<void> {
    for (let t = 0; t < ms; t += STEP_MS) {
      this.harness.emu.advance(STEP_MS);
      await this.sample();
    }
  }

  billedMinutes(nowMs: number): number {
    return this.stretches.reduce((sum, s) => sum + Math.ceil(((s.endMs ?? nowMs) - s.startMs) / MIN), 0);
  }
}

describe("the emulator's meter vs the adapter's charging states", () => {
  it("agree to the minute and to the micro-dollar through start, pause, resume, scale-to-zero and wake", async () => {
    h = await startAdapterHarness();
    const made = await h.provider.create(createRequest("meter"));
    if (made.kind !== "created") throw new Error(JSON.stringify(made));
    const s = new ChargeSampler(h, made.report.key, HF_ENDPOINT_CAPABILITIES);
    await s.sample();

    await s.run(7 * MIN + 20_000); // pending 30 s, initializing 2 min, running
    expect(await h.provider.stop(s.key, "pause")).toEqual({ kind: "accepted" });
    await s.sample();
    await s.run(5 * MIN); // paused: nothing billed
    expect(await h.provider.resume(s.key)).toEqual({ kind: "accepted" });
    await s.sample();
    await s.run(20 * MIN); // pending, initializing, running, then HF's idle scale-to-zero after 15 min
    await h.hf.resume(NS, "meter"); // a wake from scaledToZero (scale-up 1 min)
    await s.sample();
    await s.run(3 * MIN + 40_000);
    expect(await h.provider.stop(s.key, "pause")).toEqual({ kind: "accepted" });
    await s.sample();
    await s.run(MIN);

    expect(s.statuses).toEqual([
      "pending",
      "initializing",
      "running",
      "paused",
      "pending",
      "initializing",
      "running",
      "scaledToZero",
      "initializing",
      "running",
      "paused",
    ]);
    const now = h.emu.nowMs();
    const minutes = s.billedMinutes(now);
    expect(minutes).toBeGreaterThan(0);
    expect(h.emu.meter.billedMinutes(NS, "meter")).toBe(minutes);
    expect(h.emu.meter.totalMicroUsd(NS, "meter")).toBe(Math.round((minutes * L4_MICRO_USD_PER_HOUR) / 60));
  });

  it("an update while billed (updating charges) splits the meter's stretch: at most one minute more per update", async () => {
    h = await startAdapterHarness();
    const made = await h.provider.create(createRequest("upd"));
    if (made.kind !== "created") throw new Error(JSON.stringify(made));
    const s = new ChargeSampler(h, made.report.key, HF_ENDPOINT_CAPABILITIES);
    await s.sample();
    await s.run(3 * MIN + 50_000); // charging since 0:30 (initializing), running since 2:30
    await h.hf.updateEndpoint(NS, "upd", { repository: "Qwen/Qwen3-1.7B" });
    await s.sample();
    await s.run(70_000); // updating 1 min, running again
    expect(await h.provider.stop(s.key, "pause")).toEqual({ kind: "accepted" });
    await s.sample();
    expect(s.statuses).toEqual(["pending", "initializing", "running", "updating", "running", "paused"]);
    const adapterMinutes = s.billedMinutes(h.emu.nowMs());
    expect(adapterMinutes).toBe(5); // 0:30 → 5:00 continuously charging: 4 min 30 s
    expect(h.emu.meter.billedMinutes(NS, "upd")).toBe(6); // 0:30 → 3:50 (4 min) + 3:50 → 5:00 (2 min)
  });

  it("with pendingCharges the adapter over-counts only the pending time (the cautious reading)", async () => {
    h = await startAdapterHarness({ pendingCharges: true });
    const made = await h.provider.create(createRequest("cautious"));
    if (made.kind !== "created") throw new Error(JSON.stringify(made));
    expect(h.provider.capabilities.chargingStatuses).toContain("pending");
    expect(capabilitiesFor({}).chargingStatuses).not.toContain("pending");
    const s = new ChargeSampler(h, made.report.key, h.provider.capabilities);
    await s.sample();
    await s.run(4 * MIN + 10_000); // 30 s pending + 3 min 40 s billed by HF
    const meter = h.emu.meter.billedMinutes(NS, "cautious");
    expect(meter).toBe(4);
    expect(s.billedMinutes(h.emu.nowMs())).toBe(5);
  });
});
