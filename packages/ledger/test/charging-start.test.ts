// The cautious start after idle: a resource observed charging whose previous observation found it idle
// starts its run at that idle observation (billing may have begun right after it), so the ledger never
// counts less than the provider for a start it only saw later. Worked examples, the pinned wake of
// docs/reliability.md among them; the bound against a meter is the property in outage.test.ts.
import { describe, expect, it } from "vitest";
import { granulesCostMicroUsd, granulesStartedBefore } from "@pair/ledger";
import { HF_CAPS, HOUR, Ledger, MIN, RUNPOD_CAPS, SEC, T0, at, orphanEvent } from "./fixtures.js";

const L4 = 800_000;
const cost = (granules: number, g = MIN, rate = L4): number => granulesCostMicroUsd(granules, g, rate);

describe("a run observed charging after an idle observation", () => {
  it("starts at the idle observation: the pinned wake never counts a minute less than the meter", () => {
    // Idle at T0 and at every 10 s pass; billing begins at T0 + 25 s; the pass at T0 + 30 s sees it.
    const ledger = new Ledger().open();
    ledger.authorize("ep1");
    for (let t = T0; t <= T0 + 20 * SEC; t += 10 * SEC) ledger.observe("ep1", false, t);
    const seen = ledger.observe("ep1", true, T0 + 30 * SEC);
    expect(seen.events).toContainEqual({
      type: "RunBackdated",
      deploymentId: "ep1",
      nodeId: "l4",
      lastIdleAtMs: T0 + 20 * SEC,
      observedAtMs: T0 + 30 * SEC,
      amountMicroUsd: cost(1),
    });
    expect(seen.entries).toEqual([
      expect.objectContaining({ atMs: T0 + 20 * SEC, firstGranule: 0, granules: 1, amountMicroUsd: cost(1) }),
    ]);
    ledger.observe("ep1", false, T0 + 85 * SEC + 1); // stopped 60 s after it began billing, seen then
    // The meter bills [25 s, 85 s + 1 ms): 2 started minutes. A grid anchored at the charging
    // observation (30 s) would bill 1: the gap this rule closes.
    const meter = cost(granulesStartedBefore(T0 + 25 * SEC, MIN, T0 + 85 * SEC + 1));
    expect(meter).toBe(cost(2));
    expect(cost(granulesStartedBefore(T0 + 30 * SEC, MIN, T0 + 85 * SEC + 1))).toBeLessThan(meter);
    expect(ledger.entered()).toBe(cost(2));
  });

  it("enters every granule started since the idle observation at once, at the provider's granularity", () => {
    const pod = new Ledger().open("pod", { pricing: { kind: "hourly", priceMicroUsdPerHour: 3_600_000 } });
    pod.authorize("p1", "pod", T0, RUNPOD_CAPS);
    pod.observe("p1", false, T0);
    const seen = pod.observe("p1", true, T0 + 90 * SEC + 500);
    expect(seen.entries).toEqual([
      expect.objectContaining({ atMs: T0, firstGranule: 0, granules: 91, granularityMs: SEC }),
    ]);
    expect(pod.entered()).toBe(91_000); // 91 started seconds at $0.001/s, none of them seen charging
  });

  it("starts at the create's intent when the first observation already finds it charging", () => {
    // The create (or resume) is sent at T0; its first observation, 90.5 s later, reports charging: the
    // provider may have billed from any moment after T0, so the run starts at T0.
    const ledger = new Ledger().open();
    ledger.authorize("ep1");
    const intent = (atMs: number) =>
      ledger.must({
        type: "HostingEventReported",
        event: { type: "CreateIntentRecorded", id: "ep1", requestId: "r1", atMs },
        at: at(atMs),
      });
    expect(intent(T0).events).toContainEqual(
      expect.objectContaining({ type: "EpisodeOpened", openedBy: "intent" }),
    );
    expect(intent(T0 + 30 * SEC).events).toEqual([]); // a retry's intent moves nothing
    const seen = ledger.observe("ep1", true, T0 + 90 * SEC + 500);
    expect(seen.events).toContainEqual(expect.objectContaining({ type: "RunBackdated", lastIdleAtMs: T0 }));
    expect(ledger.entered()).toBe(cost(2));
  });

  it("starts at a resume's intent as at a create's", () => {
    const ledger = new Ledger().open();
    ledger.authorize("ep1");
    const key = { provider: "huggingface-endpoint", account: "alice", name: "qwen", incarnation: "i1" };
    const begun = ledger.must({
      type: "HostingEventReported",
      event: { type: "ResumeIntentRecorded", id: "ep1", requestId: "r1", key, atMs: T0 },
      at: at(T0),
    });
    expect(begun.events).toContainEqual(
      expect.objectContaining({ type: "EpisodeOpened", openedBy: "intent" }),
    );
    const seen = ledger.observe("ep1", true, T0 + 90 * SEC + 500);
    expect(seen.events).toContainEqual(expect.objectContaining({ type: "RunBackdated", lastIdleAtMs: T0 }));
    expect(ledger.entered()).toBe(cost(2));
  });

  it("closes an intent that never billed with nothing entered", () => {
    const ledger = new Ledger().open();
    ledger.authorize("ep1");
    ledger.must({
      type: "HostingEventReported",
      event: { type: "CreateIntentRecorded", id: "ep1", requestId: "r1", atMs: T0 },
      at: at(T0),
    });
    ledger.confirmStopped("ep1", T0 + 5 * MIN);
    expect(ledger.state.episodes.ep1?.state).toBe("closed");
    expect(ledger.entered()).toBe(0);
  });

  it("does not backdate the first observation of an episode, nor charging after charging", () => {
    const ledger = new Ledger().open();
    ledger.authorize("ep1");
    const first = ledger.observe("ep1", true, T0 + 5 * SEC);
    const again = ledger.observe("ep1", true, T0 + 70 * SEC);
    expect([...first.events, ...again.events].some((e) => e.type === "RunBackdated")).toBe(false);
    expect(ledger.state.episodes.ep1?.run?.anchorMs).toBe(T0 + 5 * SEC);
    expect(ledger.entered()).toBe(cost(2));
  });

  it("keeps billing nothing while idle is observed again and again", () => {
    const ledger = new Ledger().open();
    ledger.authorize("ep1");
    for (let t = T0; t <= T0 + HOUR; t += 10 * SEC) ledger.observe("ep1", false, t);
    expect(ledger.entered()).toBe(0);
    ledger.observe("ep1", true, T0 + HOUR + 10 * SEC);
    expect(ledger.entered()).toBe(cost(1)); // from the last pass, not from T0
  });

  it("starts an orphan found idle at its sighting when it is next seen charging", () => {
    const ledger = new Ledger().open();
    ledger.must({
      type: "HostingEventReported",
      event: orphanEvent("o1", undefined, T0, false),
      bind: { reservationId: "res-l4", capabilities: HF_CAPS },
      at: at(T0),
    });
    const seen = ledger.observe("o1", true, T0 + 2 * MIN + SEC);
    expect(seen.events).toContainEqual(expect.objectContaining({ type: "RunBackdated", lastIdleAtMs: T0 }));
    expect(ledger.entered()).toBe(cost(3));
  });

  it("is entered one entry per local day when the gap spans a midnight", () => {
    const lastIdle = Date.UTC(2026, 0, 14, 23, 58);
    const ledger = new Ledger().open("l4", { atMs: lastIdle });
    ledger.authorize("ep1", "l4", lastIdle);
    ledger.observe("ep1", false, lastIdle);
    ledger.observe("ep1", true, lastIdle + 4 * MIN + SEC);
    expect(ledger.state.reservations["res-l4"]?.spentByDayMicroUsd).toEqual({
      "2026-01-14": cost(2),
      "2026-01-15": cost(5) - cost(2),
    });
  });

  it("stops at once when what it entered takes spend over a cap: the ledger stops earlier, never later", () => {
    const ledger = new Ledger().open("l4", {
      budget: { timeZone: "UTC", stopLeadMs: 0, budgetMicroUsdPerDay: 100_000 },
    });
    ledger.authorize("ep1");
    ledger.observe("ep1", false, T0);
    const seen = ledger.observe("ep1", true, T0 + 8 * MIN); // 8 minutes unobserved: 106 667 µUSD
    expect(ledger.entered()).toBe(cost(8));
    expect(seen.commands).toEqual([{ type: "RequireStop", deploymentId: "ep1", reason: "budget-exceeded" }]);
  });
});
