// Accrual of billed time: episodes opened, continued, idled and closed by the hosting contract's events.
import { EVIDENCE_KINDS, type Evidence, type HostingEvent } from "@pair/provision";
import { describe, expect, it } from "vitest";
import { openEpisodes, type BilledTimeEntry } from "@pair/ledger";
import {
  DAY,
  HF_CAPS,
  HOUR,
  Ledger,
  MIN,
  RUNPOD_CAPS,
  SEC,
  T0,
  at,
  dischargedEvent,
  keyOf,
  orphanEvent,
} from "./fixtures.js";

// Cumulative: rounding happens once per rate, not per minute.
const MINUTE_AT_L4 = [13_334, 26_667, 40_000] as const;

describe("billing episodes from the hosting contract's events", () => {
  it("ResourceObserved {charging} opens an episode billed per started minute (Hugging Face)", () => {
    const ledger = new Ledger().open().start("ep1", T0);
    expect(ledger.events).toContainEqual(
      expect.objectContaining({
        type: "EpisodeOpened",
        deploymentId: "ep1",
        openedBy: "observation",
        startedAtMs: T0,
      }),
    );
    ledger.tick(T0 + 30 * SEC);
    expect(ledger.entered()).toBe(MINUTE_AT_L4[0]);
    ledger.tick(T0 + MIN); // the 2nd minute starts now; not billed until it has started
    expect(ledger.entered()).toBe(MINUTE_AT_L4[0]);
    ledger.tick(T0 + MIN + 1);
    expect(ledger.entered()).toBe(MINUTE_AT_L4[1]);
    ledger.tick(T0 + 2 * MIN + 1);
    expect(ledger.entered()).toBe(MINUTE_AT_L4[2]);
  });

  it("bills per second where the adapter declares it (Runpod)", () => {
    const ledger = new Ledger().open("pod", { pricing: { kind: "hourly", priceMicroUsdPerHour: 3_600_000 } });
    ledger.start("p1", T0, "pod", RUNPOD_CAPS);
    ledger.tick(T0 + 10 * SEC + 500);
    expect(ledger.entered()).toBe(11_000); // 11 started seconds at $0.001/s
    expect(ledger.entries.every((e) => e.kind === "billed-time" && e.granularityMs === SEC)).toBe(true);
  });

  it("bills nothing while the last observation was idle, and starts a new grid at the last idle observation when charging again", () => {
    const ledger = new Ledger().open().start("ep1", T0);
    ledger.observe("ep1", false, T0 + 90 * SEC); // scaled to zero during the 2nd minute: that minute is billed
    expect(ledger.entered()).toBe(MINUTE_AT_L4[1]);
    ledger.tick(T0 + 2 * HOUR);
    expect(ledger.entered()).toBe(MINUTE_AT_L4[1]);
    ledger.observe("ep1", false, T0 + 2 * HOUR); // a pass still sees it scaled to zero
    expect(ledger.entered()).toBe(MINUTE_AT_L4[1]);
    ledger.observe("ep1", true, T0 + 2 * HOUR + 10 * SEC); // it may have woken right after that pass
    ledger.tick(T0 + 2 * HOUR + 10 * SEC + 1);
    expect(ledger.entered()).toBe(MINUTE_AT_L4[1] + 13_334);
    const last = ledger.entries.at(-1) as BilledTimeEntry;
    expect(last).toMatchObject({ atMs: T0 + 2 * HOUR, firstGranule: 0, granules: 1 });
  });

  it("an open episode accrues until evidence ends it, never after", () => {
    const ledger = new Ledger().open().start("ep1", T0);
    ledger.tick(T0 + 10 * MIN + 1);
    const decision = ledger.confirmStopped("ep1", T0 + 10 * MIN + 30 * SEC);
    expect(decision.events).toContainEqual(
      expect.objectContaining({ type: "EpisodeClosed", deploymentId: "ep1", accruedMicroUsd: 146_667 }),
    );
    ledger.tick(T0 + 5 * HOUR);
    expect(ledger.entered()).toBe(146_667); // 11 minutes
    expect(openEpisodes(ledger.state)).toEqual([]);
    expect(
      ledger.refusal({
        type: "HostingEventReported",
        event: observedCharging("ep1", T0 + 6 * HOUR),
        at: at(T0 + 6 * HOUR),
      }),
    ).toEqual({
      code: "episode-closed",
      deploymentId: "ep1",
    });
    expect(
      ledger.refusal({
        type: "ConfirmStopped",
        deploymentId: "ep1",
        evidence: stopAt(T0 + 6 * HOUR),
        at: at(T0 + 6 * HOUR),
      }),
    ).toEqual({
      code: "episode-closed",
      deploymentId: "ep1",
    });
  });

  it("ObligationDischarged closes the episode with its evidence", () => {
    const ledger = new Ledger().open().start("ep1", T0);
    ledger.must({
      type: "HostingEventReported",
      event: dischargedEvent("ep1", T0 + 5 * MIN),
      at: at(T0 + 5 * MIN),
    });
    expect(ledger.state.episodes.ep1).toMatchObject({
      state: "closed",
      closedAtMs: T0 + 5 * MIN,
      evidence: { kind: "stop-accepted" },
    });
    expect(ledger.entered()).toBe(66_667);
  });

  it.each(EVIDENCE_KINDS)("closes only with the contract's evidence kinds: %s is accepted", (kind) => {
    const ledger = new Ledger().open().start("ep1", T0);
    ledger.confirmStopped("ep1", T0 + MIN, evidenceOf(kind, T0 + MIN));
    expect(ledger.state.episodes.ep1?.state).toBe("closed");
  });

  it.each(["disconnected", "lease-expired", "restarted", "partial-listing"])(
    "refuses %s as evidence",
    (kind) => {
      const ledger = new Ledger().open().start("ep1", T0);
      const evidence = { kind, observedAtMs: T0 + MIN } as unknown as Evidence;
      expect(
        ledger.refusal({ type: "ConfirmStopped", deploymentId: "ep1", evidence, at: at(T0 + MIN) }),
      ).toMatchObject({
        code: "not-evidence",
        deploymentId: "ep1",
      });
      ledger.tick(T0 + 10 * MIN + 1);
      expect(ledger.state.episodes.ep1?.state).toBe("open");
      expect(ledger.entered()).toBe(146_667);
    },
  );

  it("refuses evidence without its particulars", () => {
    const ledger = new Ledger().open().start("ep1", T0);
    const anonymous: Evidence = {
      kind: "external-confirmation",
      confirmedBy: " ",
      note: "",
      observedAtMs: T0,
    };
    expect(
      ledger.refusal({ type: "ConfirmStopped", deploymentId: "ep1", evidence: anonymous, at: at(T0) }).code,
    ).toBe("not-evidence");
  });

  it.each<HostingEvent["type"]>(["ObligationTransferred", "StopFailed", "StopRequired", "PhaseChanged"])(
    "%s does not stop billing",
    (type) => {
      const ledger = new Ledger().open().start("ep1", T0);
      const events: Record<string, HostingEvent> = {
        ObligationTransferred: {
          type: "ObligationTransferred",
          id: "ep1",
          to: { controllerId: "other", epoch: 9 },
          atMs: T0 + MIN,
        },
        StopFailed: { type: "StopFailed", id: "ep1", detail: "502", attempts: 1 },
        StopRequired: { type: "StopRequired", id: "ep1", reason: "lifetime-exceeded", atMs: T0 + MIN },
        PhaseChanged: { type: "PhaseChanged", id: "ep1", from: "Active", to: "StopRequired", atMs: T0 + MIN },
      };
      const event = events[type];
      if (event === undefined) throw new Error(type);
      const before = ledger.state;
      const decision = ledger.must({ type: "HostingEventReported", event, at: at(T0 + MIN) });
      expect(decision.state).toBe(before);
      ledger.tick(T0 + 3 * MIN + 1);
      expect(ledger.entered()).toBe(53_334);
    },
  );

  it("a new price applies from the next billed granule", () => {
    const ledger = new Ledger().open().start("ep1", T0);
    ledger.must({
      type: "ChangePrice",
      nodeId: "l4",
      pricing: { kind: "hourly", priceMicroUsdPerHour: 1_600_000 },
      at: at(T0 + 30 * SEC),
    });
    ledger.tick(T0 + 2 * MIN + 1);
    const rates = ledger.entries.map((e) =>
      e.kind === "billed-time" ? [e.firstGranule, e.granules, e.rateMicroUsdPerHour] : [],
    );
    expect(rates).toEqual([
      [0, 1, 800_000],
      [1, 2, 1_600_000],
    ]);
    expect(ledger.entered()).toBe(13_334 + 53_334);
  });

  it("refuses to turn an hourly node into a per-token one", () => {
    const ledger = new Ledger().open();
    const pricing = {
      kind: "per-token",
      microUsdPerMillionInputTokens: 1,
      microUsdPerMillionOutputTokens: 1,
    } as const;
    expect(ledger.refusal({ type: "ChangePrice", nodeId: "l4", pricing, at: at(T0) }).code).toBe(
      "invalid-input",
    );
  });

  it("entries never span a local midnight, so each counts in one day", () => {
    const budget = { timeZone: "Europe/Berlin", stopLeadMs: 0 };
    const start = Date.UTC(2026, 0, 14, 22, 30); // 23:30 in Berlin
    const ledger = new Ledger().open("l4", { budget, atMs: start }).start("ep1", start);
    ledger.tick(start + HOUR + 1);
    const days = ledger.entries.map((e) => [e.atMs, e.kind === "billed-time" ? e.granules : 0]);
    expect(days).toEqual([
      [start, 30],
      [Date.UTC(2026, 0, 14, 23), 31],
    ]);
    expect(ledger.state.reservations["res-l4"]?.spentByDayMicroUsd).toEqual({
      "2026-01-14": 400_000,
      "2026-01-15": 413_334,
    });
  });

  it("after a restart with no observation yet, an open episode is taken as charging", () => {
    const ledger = new Ledger().open().start("ep1", T0);
    ledger.observe("ep1", false, T0 + 30 * SEC); // idle: 1 minute billed
    ledger.must({ type: "SessionStarted", at: at(T0 + HOUR) }); // down for an hour while idle: nothing more
    expect(ledger.entered()).toBe(13_334);
    expect(ledger.state.episodes.ep1).toMatchObject({
      lastObservation: "unknown",
      run: { anchorMs: T0 + HOUR },
    });
    ledger.tick(T0 + HOUR + 2 * MIN + 1);
    expect(ledger.entered()).toBe(13_334 + 40_000);
  });

  it("time the sponsor was down while charging is billed", () => {
    const ledger = new Ledger().open().start("ep1", T0);
    ledger.must({ type: "SessionStarted", at: at(T0 + HOUR + 1) });
    expect(ledger.entered()).toBe(800_000 + 13_334);
  });

  it("an orphan is entered from its reported creation, and closed by evidence", () => {
    const ledger = new Ledger().open();
    const bind = { reservationId: "res-l4", capabilities: HF_CAPS };
    const created = T0 - 2 * HOUR;
    ledger.must({ type: "HostingEventReported", event: orphanEvent("o1", created, T0), bind, at: at(T0) });
    expect(ledger.state.episodes.o1).toMatchObject({
      openedBy: "orphan",
      startedAtMs: created,
      startKnown: true,
      key: keyOf("o1"),
    });
    expect(ledger.entered()).toBe(1_600_000); // two hours it billed before we found it
    ledger.confirmStopped("o1", T0 + 30 * SEC);
    expect(ledger.entered()).toBe(1_613_334);
  });

  it("an orphan without a reported creation is billed since first seen", () => {
    const ledger = new Ledger().open();
    const bind = { reservationId: "res-l4", capabilities: HF_CAPS };
    ledger.must({ type: "HostingEventReported", event: orphanEvent("o1", undefined, T0), bind, at: at(T0) });
    expect(ledger.state.episodes.o1).toMatchObject({
      startedAtMs: T0,
      startKnown: false,
      lastObservation: "unknown",
    });
    ledger.tick(T0 + MIN + 1);
    expect(ledger.entered()).toBe(26_667);
  });

  it("an orphan found idle (scaled to zero) bills nothing until it is seen charging", () => {
    const ledger = new Ledger().open();
    const bind = { reservationId: "res-l4", capabilities: HF_CAPS };
    const found = orphanEvent("o1", T0 - 2 * HOUR, T0, false);
    ledger.must({ type: "HostingEventReported", event: found, bind, at: at(T0) });
    expect(ledger.state.episodes.o1).toMatchObject({ startedAtMs: T0, lastObservation: "idle" });
    ledger.tick(T0 + 10 * MIN);
    expect(ledger.entered()).toBe(0);
    ledger.confirmStopped("o1", T0 + 11 * MIN);
    expect(ledger.entered()).toBe(0);
  });

  it("refuses events for deployments it cannot bill to anyone", () => {
    const ledger = new Ledger().open();
    expect(
      ledger.refusal({ type: "HostingEventReported", event: orphanEvent("o1", undefined, T0), at: at(T0) }),
    ).toEqual({
      code: "unbound-deployment",
      deploymentId: "o1",
    });
    expect(
      ledger.refusal({ type: "HostingEventReported", event: observedCharging("x", T0), at: at(T0) }).code,
    ).toBe("unbound-deployment");
    const bind = { reservationId: "nope", capabilities: HF_CAPS };
    expect(
      ledger.refusal({
        type: "HostingEventReported",
        event: orphanEvent("o1", undefined, T0),
        bind,
        at: at(T0),
      }).code,
    ).toBe("unknown-reservation");
  });

  it("evidence before any observation closes the binding: nothing billed, nothing more accrues", () => {
    const ledger = new Ledger().open();
    ledger.authorize("ep1");
    const d = ledger.confirmStopped("ep1", T0 + MIN, {
      kind: "absent-from-complete-listing",
      listingStartedAtMs: T0 + MIN,
      observedAtMs: T0 + MIN,
    });
    expect(d.events).toContainEqual(
      expect.objectContaining({ type: "StopConfirmedBeforeBilling", deploymentId: "ep1" }),
    );
    expect(
      ledger.refusal({
        type: "HostingEventReported",
        event: observedCharging("ep1", T0 + 2 * MIN),
        at: at(T0 + 2 * MIN),
      }).code,
    ).toBe("episode-closed");
  });

  it("evidence that arrives after the ledger moved on closes at the ledger's clock; billed time is never taken back", () => {
    const ledger = new Ledger().open().start("ep1", T0);
    ledger.tick(T0 + 5 * MIN + 1);
    ledger.confirmStopped("ep1", T0 + 2 * MIN);
    expect(ledger.state.episodes.ep1).toMatchObject({ state: "closed", closedAtMs: T0 + 5 * MIN + 1 });
    expect(ledger.entered()).toBe(80_000);
  });

  it("an episode crossing many days keeps one grid", () => {
    const ledger = new Ledger().open().start("ep1", T0);
    ledger.tick(T0 + 3 * DAY);
    expect(ledger.entered()).toBe(3 * 24 * 800_000);
    const grid = ledger.entries.map((e) => (e.kind === "billed-time" ? [e.firstGranule, e.granules] : []));
    // Split at each UTC midnight: 14 h on the 14th, 24 h on the 15th and 16th, 10 h on the 17th.
    expect(grid).toEqual([
      [0, 840],
      [840, 1440],
      [2280, 1440],
      [3720, 600],
    ]);
  });
});

function observedCharging(id: string, atMs: number): HostingEvent {
  return { type: "ResourceObserved", id, key: keyOf(id), status: "running", charging: true, atMs };
}

function stopAt(atMs: number): Evidence {
  return { kind: "stop-accepted", mode: "pause", observedAtMs: atMs };
}

function evidenceOf(kind: (typeof EVIDENCE_KINDS)[number], atMs: number): Evidence {
  switch (kind) {
    case "absent-from-complete-listing":
      return { kind, listingStartedAtMs: atMs, observedAtMs: atMs };
    case "provider-reported-billing-ended":
      return { kind, status: "paused", observedAtMs: atMs };
    case "stop-accepted":
      return { kind, mode: "pause", observedAtMs: atMs };
    case "external-confirmation":
      return { kind, confirmedBy: "operator", note: "paused in the HF console", observedAtMs: atMs };
  }
}
