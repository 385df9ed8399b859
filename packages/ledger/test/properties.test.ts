// The ledger under random interleavings of requests, price changes, window resets (time crossing
// local midnights and month ends), observations, orphans, evidence and restarts. Invariants by name:
// "spend = Σ entries", "never accrue after evidence", "a restart loses no entry", and "no cap is
// overshot by more than one billing granule per episode plus what usage entered above its estimate",
// plus, in the ledger's favour only, what outages and runs backdated to an idle observation entered.
// Replay a failure with the seed and path fast-check prints; LEDGER_SIM_RUNS sets the number of runs.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { budget, scenario } from "./arbitraries.js";
import { MIN } from "./fixtures.js";
import { Simulation, type Scenario } from "./simulation.js";

const RUNS = Number(process.env.LEDGER_SIM_RUNS ?? 150);

describe("the ledger under random interleavings (property)", () => {
  it("keeps spend = Σ entries, never accrues after evidence, loses nothing across restarts, and holds every cap", () => {
    let backdated = 0;
    fc.assert(
      fc.property(scenario, (s) => {
        const sim = new Simulation(s);
        sim.run();
        sim.checkNothingBilledAfterEvidence();
        expect(sim.overshoots()).toEqual([]);
        backdated += sim.backdatedBilled.size;
      }),
      // Shrinking a long schedule can take minutes: report the failure as shrunk after 20 s.
      { numRuns: RUNS, interruptAfterTimeLimit: 20_000 },
    );
    expect(backdated).toBeGreaterThan(0); // runs backdated to an idle observation were exercised
  });

  it("the cap bound is not vacuous: without the daemon's stops, spend runs past it", () => {
    // The same world, but the sponsor never wakes the ledger at its deadlines and never stops.
    const s: Scenario = {
      timeZone: "UTC",
      hourly: [
        { budget: budget("UTC", 100_000, undefined), priceMicroUsdPerHour: 800_000, perSecond: false },
      ],
      tokenBudget: budget("UTC", undefined, undefined),
      latencyFraction: 0,
      steps: [
        { dtMs: 0, op: { t: "start", node: 0 } },
        { dtMs: 0, op: { t: "orphan", node: 0 } },
      ],
    };
    const sim = new Simulation(s);
    sim.run();
    expect(sim.overshoots()).toEqual([]);
    // Bill 20 minutes with nobody obeying the stop: the bound must catch it.
    const lazy = new Simulation(s);
    for (const st of s.steps) lazy.apply(st.op);
    lazy.must({ type: "Tick", at: { wallMs: lazy.now + 20 * MIN, monoMs: 0 } });
    expect(lazy.overshoots()).not.toEqual([]);
  });
});
