// The seed's state table ("How PAIR treats the node in each Hugging Face state"), row by row, as
// the pure `nodeTreatment` answers it, plus the same answers for endpoints the emulator actually put
// in those states (read through the adapter over HTTPS).
import { afterEach, describe, expect, it } from "vitest";
import { ENDPOINT_STATES } from "@pair/emulators";
import { HF_ENDPOINT_STATES, NODE_TREATMENT_TABLE, nodeTreatment } from "../../src/index.js";
import { createRequest, startAdapterHarness, type AdapterHarness } from "./adapter-harness.js";

const WAKE = { wakeOnRequest: true };
const NO_WAKE = { wakeOnRequest: false };

describe("nodeTreatment: the seed's table", () => {
  it("running → eligible", () => {
    expect(nodeTreatment("running", "Endpoint is ready", NO_WAKE)).toEqual({
      kind: "eligible",
      eligible: true,
      coldStart: false,
    });
  });

  it("scaledToZero → eligible with a cold start (X-Scale-Up-Timeout)", () => {
    expect(nodeTreatment("scaledToZero", undefined, NO_WAKE)).toEqual({
      kind: "cold-start",
      eligible: true,
      coldStart: true,
    });
  });

  it("paused → not eligible; with wake on request the sponsor wakes it, without it `rented_node_paused`", () => {
    expect(nodeTreatment("paused", "Endpoint is paused", WAKE)).toEqual({
      kind: "paused",
      eligible: false,
      onRequest: "wake",
      refusalCode: "rented_node_paused",
    });
    expect(nodeTreatment("paused", undefined, NO_WAKE)).toMatchObject({
      eligible: false,
      onRequest: "refuse",
      refusalCode: "rented_node_paused",
    });
  });

  it("pending, initializing, updating → starting, not eligible", () => {
    for (const state of ["pending", "initializing", "updating"])
      for (const options of [WAKE, NO_WAKE])
        expect(nodeTreatment(state, "x", options)).toEqual({ kind: "starting", eligible: false });
  });

  it("failed → unhealthy with Hugging Face's message (a default when HF gave none)", () => {
    expect(nodeTreatment("failed", "Image pull failed: manifest unknown", NO_WAKE)).toEqual({
      kind: "unhealthy",
      eligible: false,
      message: "Image pull failed: manifest unknown",
    });
    expect(nodeTreatment("failed", " ", NO_WAKE)).toMatchObject({ message: "Endpoint failed to deploy" });
  });

  it("not in the seed's table: updateFailed and unknown or missing states are unhealthy, never routed to", () => {
    expect(nodeTreatment("updateFailed", "bad image", WAKE)).toEqual({
      kind: "unhealthy",
      eligible: false,
      message: "bad image",
    });
    expect(nodeTreatment("hibernating", undefined, WAKE)).toMatchObject({
      kind: "unhealthy",
      message: 'Hugging Face reported an unknown state "hibernating"',
    });
    expect(nodeTreatment(undefined, undefined, WAKE)).toMatchObject({ kind: "unhealthy", eligible: false });
  });

  it("the exported table has a row for every state HF reports (and the emulator plays), matching the function", () => {
    expect([...HF_ENDPOINT_STATES].sort()).toEqual([...ENDPOINT_STATES].sort());
    expect(Object.keys(NODE_TREATMENT_TABLE).sort()).toEqual([...HF_ENDPOINT_STATES].sort());
    for (const state of HF_ENDPOINT_STATES) {
      const treated = nodeTreatment(state, "m", NO_WAKE);
      expect(treated.kind).toBe(NODE_TREATMENT_TABLE[state]);
      expect(treated.eligible).toBe(state === "running" || state === "scaledToZero");
    }
  });
});

describe("nodeTreatment of endpoints the emulator put in each state", () => {
  let h: AdapterHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("walks create → starting → eligible → cold start → paused, and failed with HF's message", async () => {
    h = await startAdapterHarness();
    const treat = async (name: string) => {
      const listed = (await h!.provider.list()).resources.find((r) => r.key.name === name);
      return nodeTreatment(listed?.status, listed?.message, WAKE);
    };
    const made = await h.provider.create(createRequest("walk"));
    expect(made.kind).toBe("created");
    expect(await treat("walk")).toMatchObject({ kind: "starting" });
    h.emu.advance(30_000);
    expect(await treat("walk")).toMatchObject({ kind: "starting" });
    h.emu.advance(120_000);
    expect(await treat("walk")).toMatchObject({ kind: "eligible" });
    h.emu.advance(15 * 60_000); // HF's own idle scale-to-zero (the crash backstop PAIR turned on)
    expect(await treat("walk")).toMatchObject({ kind: "cold-start" });
    await h.hf.pause("alice", "walk");
    expect(await treat("walk")).toMatchObject({ kind: "paused", onRequest: "wake" });

    h.emu.faults.failNextDeploy("Endpoint failed to start: exit code 137");
    await h.provider.create(createRequest("broken"));
    h.emu.advance(150_000);
    expect(await treat("broken")).toEqual({
      kind: "unhealthy",
      eligible: false,
      message: "Endpoint failed to start: exit code 137",
    });
  });
});
