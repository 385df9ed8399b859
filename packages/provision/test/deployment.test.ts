import { describe, expect, it } from "vitest";
import { OBSERVED_FIELDS, observe, type ResourceReport } from "@pair/provision";
import { SPEC } from "./fixtures.js";

const key = { provider: "fake", account: "acct", name: SPEC.name, incarnation: "inc-1" };
const full: Required<ResourceReport> = {
  key,
  status: "RUNNING",
  ownerTag: "pair:node-a",
  requestId: "request-1",
  epoch: 3,
  address: "https://x.example",
  servedModel: "m",
  ready: true,
  hardware: "NVIDIA L4",
  createdAtMs: 5,
  message: "ok",
};

describe("observe (requested is not observed)", () => {
  it.each(OBSERVED_FIELDS)("leaves %s unknown when the provider did not report it", (field) => {
    const { [field]: _omitted, ...report } = full;
    const observed = observe(report, 100);
    expect(observed[field]).toBeUndefined();
    expect(field in observed).toBe(false);
    // Every other field came from the report, not from the spec.
    for (const other of OBSERVED_FIELDS) if (other !== field) expect(observed[other]).toEqual(full[other]);
  });

  it("never fills a field from the spec or with false", () => {
    const observed = observe({ key }, 100);
    expect(observed).toEqual({ key, observedAtMs: 100 });
    expect(observed.ready).not.toBe(false);
    expect(observed.hardware).not.toBe(SPEC.hardware);
  });

  it("keeps a reported false as false", () => {
    expect(observe({ key, ready: false }, 1).ready).toBe(false);
  });
});
