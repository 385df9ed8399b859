// A batch's log is its start, its progress once a minute and its end — never a line of each request
// line: 400 lines of 5 virtual s each, 8 at once (250 s), log six lines, not hundreds.
import { afterEach, describe, expect, it } from "vitest";
import { RentalWorld } from "./rental-world.js";

const worlds: RentalWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.close();
});

describe("a batch's log", () => {
  it("has the start, a progress line a minute and the end, whatever the lines", async () => {
    const w = new RentalWorld({ clusterLineMs: 5_000, rentedLineMs: 5_000 });
    worlds.push(w);
    const id = await w.submit(400, 100);
    await w.advance(600_000, () => w.store.batch(id)?.status === "completed");
    expect(w.store.batch(id)?.status).toBe("completed");
    const mine = w.log.filter((l) => l.startsWith(`batch ${id}: `));
    expect(mine).toHaveLength(w.log.length);
    expect(mine[0]).toBe(`batch ${id}: started, 0/400 line(s) done`);
    expect(mine.at(-1)).toBe(`batch ${id}: completed, 400 line(s) answered, 0 in the error file`);
    // 250 s of work: a progress line at 60, 120, 180 and 240 s, each with the lines done and the rate.
    const progress = mine.slice(1, -1);
    expect(progress).toHaveLength(4);
    for (const line of progress)
      expect(line).toMatch(
        new RegExp(`^batch ${id}: \\d+/400 line\\(s\\) done \\(0 failed\\), [\\d.]+/min, \\d+ running$`),
      );
    expect(progress[0]).toContain(": 88/400 line(s) done (0 failed), 88.0/min, 8 running");
  });
});
