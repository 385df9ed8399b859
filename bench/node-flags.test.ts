// The benchmarks' check of the node flags a command line passes to a child process.
import { describe, expect, it } from "vitest";
import { parseNodeFlags } from "./child-protocol.js";

describe("parseNodeFlags", () => {
  it("splits flags, with and without values, digits in the name included", () => {
    expect(parseNodeFlags("node-flags", " --expose-gc  --v8-pool-size=1 --heap-growing-percent=50")).toEqual([
      "--expose-gc",
      "--v8-pool-size=1",
      "--heap-growing-percent=50",
    ]);
    expect(parseNodeFlags("node-flags", "")).toEqual([]);
  });

  it("refuses what is not a flag, naming the option", () => {
    expect(() => parseNodeFlags("base-node-flags", "--expose-gc script.js")).toThrow(/--base-node-flags:/);
    expect(() => parseNodeFlags("node-flags", "--require=/tmp/x;rm")).toThrow(RangeError);
    expect(() => parseNodeFlags("node-flags", "-e")).toThrow(RangeError);
  });
});
