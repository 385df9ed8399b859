// A pod's GPU as Runpod reports it: v2's `gpu: {id, count}`, or the v1 shape seen live (the type in
// `machine.gpuTypeId`, the count in a top-level `gpuCount`).
import { describe, expect, it } from "vitest";
import { parsePod } from "../src/index.js";

const pod = (fields: Record<string, unknown>) =>
  parsePod({ id: "abc", name: "p", status: "RUNNING", ...fields });

describe("parsePod's gpu", () => {
  it("reads v2's gpu id and count", () => {
    expect(pod({ gpu: { id: "NVIDIA L40S", count: 2 } }).gpu).toEqual({ id: "NVIDIA L40S", count: 2 });
  });

  it("falls back to the v1 fields, and to one GPU when no count is given", () => {
    expect(pod({ machine: { gpuTypeId: "NVIDIA A40", gpuDisplayName: "A40" }, gpuCount: 4 }).gpu).toEqual({
      id: "NVIDIA A40",
      count: 4,
    });
    expect(pod({ gpu: { id: "NVIDIA L4" } }).gpu).toEqual({ id: "NVIDIA L4", count: 1 });
    expect(pod({}).gpu).toBeUndefined();
  });
});
