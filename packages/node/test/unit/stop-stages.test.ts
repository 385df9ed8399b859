// A node's stop is data (stages/stage.ts): each phase runs through every stage, last built first, and
// a step that fails neither stops the others nor hides: it is returned.
import { describe, expect, it } from "vitest";
import { STOP_PHASES, stopStages, type Stage } from "../../src/stages/stage.js";

function recording(name: string, steps: string[], fail?: string): Stage {
  const step = (phase: string) => () => {
    steps.push(`${name}.${phase}`);
    if (phase === fail) throw new Error(`${name} ${phase} failed`);
  };
  return {
    name,
    quiesce: step("quiesce"),
    drain: (graceMs) => {
      steps.push(`${name}.drain(${graceMs})`);
      return Promise.resolve();
    },
    close: step("close"),
    release: step("release"),
  };
}

describe("stopStages", () => {
  it("runs each phase in order through the stages last-built first", async () => {
    const steps: string[] = [];
    const failures = await stopStages([recording("core", steps), recording("cluster", steps)], 250);
    expect(failures).toEqual([]);
    expect(STOP_PHASES).toEqual(["quiesce", "drain", "close", "release"]);
    expect(steps).toEqual([
      "cluster.quiesce",
      "core.quiesce",
      "cluster.drain(250)",
      "core.drain(250)",
      "cluster.close",
      "core.close",
      "cluster.release",
      "core.release",
    ]);
  });

  it("goes on past a failing step and returns the failures, first first", async () => {
    const steps: string[] = [];
    const failures = await stopStages(
      [recording("core", steps, "release"), { name: "bare" }, recording("sponsor", steps, "close")],
      0,
    );
    expect(failures.map(String)).toEqual(["Error: sponsor close failed", "Error: core release failed"]);
    expect(steps).toHaveLength(8);
    expect(steps.at(-1)).toBe("core.release");
  });
});
