// The tour runner on its own (no sandbox): a step that throws is reported as failed with its message
// and the tour goes on; a stop request ends it between steps; ✓/✗ lines say which step did what.
import { describe, expect, it } from "vitest";
import type { DemoCluster } from "@pair/demo";
import { runTour, type TourStepSpec } from "@pair/demo";

const cluster = {} as DemoCluster; // the fake steps never touch it

const steps: TourStepSpec[] = [
  {
    step: 1,
    title: "fine",
    run: (_c, out) => {
      out.does("pair something");
      out.sees("it worked");
      return Promise.resolve({ ok: true, outcome: { n: 1 } });
    },
  },
  { step: 2, title: "throws", run: () => Promise.reject(new Error("the emulator went away")) },
  { step: 3, title: "not as the seed says", run: () => Promise.resolve({ ok: false, outcome: {} }) },
];

describe("runTour", () => {
  it("reports a throwing step as failed with its message and runs the next", async () => {
    let text = "";
    const results = await runTour(cluster, (t) => void (text += t), steps);
    expect(results).toEqual([
      { step: 1, title: "fine", ok: true, outcome: { n: 1 } },
      { step: 2, title: "throws", ok: false, outcome: { error: "the emulator went away" } },
      { step: 3, title: "not as the seed says", ok: false, outcome: {} },
    ]);
    expect(text).toContain("Step 1 — fine\n  $ pair something\n    → it worked\n  ✓ step 1 shown");
    expect(text).toContain("the step failed: the emulator went away\n  ✗ step 2");
    expect(text).toContain("✗ step 3 did not turn out as the seed says");
  });

  it("stops between steps when asked", async () => {
    let calls = 0;
    const results = await runTour(
      cluster,
      () => undefined,
      steps,
      () => calls++ >= 1,
    );
    expect(results.map((r) => r.step)).toEqual([1]);
  });
});
