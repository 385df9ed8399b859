// The managed job node's plan (issue 10): settings checked with their units, the spec the Jobs adapter
// accepts (window → timeoutSeconds), the rental window, routing `prefer` during the window by default
// and `never` after it, and the hourly cost basis with the exposed-port surcharge.
import { describe, expect, it } from "vitest";
import { toJobSpec } from "@pair/huggingface";
import {
  jobCostBasis,
  jobDeploymentSpec,
  jobRentalWindow,
  jobRoutingUse,
  validateJobNodeSettings,
  type JobNodeSettings,
} from "../src/hf-job/job-node-plan.js";

const BATCH: JobNodeSettings = { repo: "Qwen/Qwen3-0.6B", flavor: "l4x1", windowMs: 2 * 3_600_000 };

describe("job node plan", () => {
  it("checks the settings and names what is wrong", () => {
    expect(validateJobNodeSettings(BATCH)).toEqual([]);
    expect(validateJobNodeSettings({ ...BATCH, repo: "no-owner" })[0]).toMatch(/^job.repo/);
    expect(validateJobNodeSettings({ ...BATCH, flavor: "L4 x1" })[0]).toMatch(/^job.flavor/);
    expect(validateJobNodeSettings({ ...BATCH, windowMs: 10_000 })[0]).toMatch(/^job.window/);
    expect(validateJobNodeSettings({ ...BATCH, windowMs: 48 * 3_600_000 })[0]).toMatch(/^job.window/);
    expect(validateJobNodeSettings({ ...BATCH, routingDuringWindow: "never" })[0]).toMatch(/^job.routing/);
    expect(() => jobDeploymentSpec("batch", "alice", { ...BATCH, repo: "x" })).toThrow(/job.repo/);
  });

  it("builds a spec the Jobs adapter turns into vllm serve with timeoutSeconds = the window", () => {
    const spec = jobDeploymentSpec("batch-night", "alice", { ...BATCH, image: "vllm/vllm-openai:v0.24.0" });
    const job = toJobSpec({ spec, requestId: "r1", ownerTag: "pair-node-a", epoch: 1 }, "alice", {});
    expect(job.ok).toBe(true);
    if (!job.ok) return;
    expect(job.value).toMatchObject({
      flavor: "l4x1",
      timeoutSeconds: 7200,
      dockerImage: "vllm/vllm-openai:v0.24.0",
    });
    expect(job.value.command.slice(0, 3)).toEqual(["vllm", "serve", "Qwen/Qwen3-0.6B"]);
  });

  it("routes with prefer during the window (or what is configured) and never outside it", () => {
    const w = jobRentalWindow(1_000, BATCH);
    expect(w).toEqual({ startMs: 1_000, endMs: 1_000 + 7_200_000 });
    expect(jobRoutingUse(w, 999, BATCH)).toBe("never");
    expect(jobRoutingUse(w, 1_000, BATCH)).toBe("prefer");
    expect(jobRoutingUse(w, 7_200_999, BATCH)).toBe("prefer");
    expect(jobRoutingUse(w, 7_201_000, BATCH)).toBe("never");
    expect(jobRoutingUse(w, 5_000, { ...BATCH, routingDuringWindow: "overflow" })).toBe("overflow");
  });

  it("costs the flavor's per-minute price × 60 plus $0.01/h for the exposed port", () => {
    const basis = jobCostBasis({
      name: "l4x1",
      prettyName: undefined,
      gpuModel: "L4",
      gpuCount: 1,
      usdPerMinute: 0.8 / 60,
    });
    expect(basis.usdPerHour).toBeCloseTo(0.81, 10);
  });
});
