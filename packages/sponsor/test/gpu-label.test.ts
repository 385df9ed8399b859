// The GPU a rented node shows, from what each provider reports: a Hugging Face endpoint's instance
// type and size, a Jobs flavor's hardware entry (or its name before the list is read), a Runpod pod's
// GPU type and count.
import { describe, expect, it } from "vitest";
import { endpointGpuLabel, jobGpuLabel, podGpuLabel } from "../src/index.js";

describe("a rented node's GPU label", () => {
  it("reads a Hugging Face endpoint's compute: the instance type's GPU × the size", () => {
    const label = (instanceType: string, instanceSize: string, accelerator: string | undefined = "gpu") =>
      endpointGpuLabel({ accelerator, instanceType, instanceSize });
    expect(label("nvidia-l4", "x1")).toBe("L4 ×1");
    expect(label("nvidia-l40s", "x4")).toBe("L40S ×4");
    expect(label("nvidia-h200", "x8", undefined)).toBe("H200 ×8");
    expect(label("intel-spr", "x2", "cpu")).toBe("intel-spr ×2");
    expect(label("nvidia-a10g", "")).toBe("A10G");
    expect(
      endpointGpuLabel({ accelerator: "gpu", instanceType: undefined, instanceSize: "x1" }),
    ).toBeUndefined();
  });

  it("names a Jobs flavor's GPU as HF's hardware list does, else from the flavor's name", () => {
    expect(jobGpuLabel("l4x1", { gpuModel: "L4", gpuCount: 1 })).toBe("L4 ×1");
    expect(jobGpuLabel("h200x8", { gpuModel: "H200", gpuCount: 8 })).toBe("H200 ×8");
    expect(jobGpuLabel("cpu-basic", { gpuModel: null, gpuCount: 0 })).toBe("cpu-basic");
    expect(jobGpuLabel("l4x1")).toBe("L4 ×1");
    expect(jobGpuLabel("l40sx4")).toBe("L40S ×4");
    expect(jobGpuLabel("a10g-largex2")).toBe("A10G ×2");
    expect(jobGpuLabel("a100-large")).toBe("A100 ×1");
    expect(jobGpuLabel("t4-small")).toBe("T4 ×1");
    expect(jobGpuLabel("h200")).toBe("H200 ×1");
    expect(jobGpuLabel("rtx-pro-6000x2")).toBe("RTX PRO 6000 ×2");
    expect(jobGpuLabel("cpu-upgrade")).toBe("cpu-upgrade");
  });

  it("shows a Runpod pod's GPU type id × its count", () => {
    expect(podGpuLabel({ id: "NVIDIA L40S", count: 2 })).toBe("NVIDIA L40S ×2");
    expect(podGpuLabel({ id: "NVIDIA A40", count: 1 })).toBe("NVIDIA A40 ×1");
  });
});
