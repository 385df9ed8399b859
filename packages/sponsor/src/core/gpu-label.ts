/**
 * The GPU a rented node shows (`gpu` in `pair nodes`, `pair rented` and the peer view): the model
 * and how many, as "L4 ×1" or "NVIDIA L40S ×2", read from what the provider reports — a Hugging Face
 * endpoint's `compute.instanceType` and `instanceSize`, a Jobs flavor's hardware entry (or, before
 * the hardware list is read, the flavor's own name), a Runpod pod's `gpu.id` and `gpu.count`.
 * Must not know: which node it labels, HTTP, the providers' wire.
 */

/** The one shape every label takes: the model, then how many. */
export function gpuLabel(model: string, count: number): string {
  return `${model} ×${count}`;
}

/** HF's GPU name from its instance type: `nvidia-l4` → `L4`; CPU (and other) hardware keeps its type. */
export function gpuName(offer: { readonly instanceType: string; readonly accelerator: string }): string {
  return offer.accelerator === "gpu" && offer.instanceType.startsWith("nvidia-")
    ? offer.instanceType.slice("nvidia-".length).toUpperCase()
    : offer.instanceType;
}

/**
 * A Hugging Face endpoint's hardware as its compute reports it: `nvidia-l4` at `x1` → "L4 ×1" (the
 * size is the number of accelerators). Undefined when HF reported no instance type.
 */
export function endpointGpuLabel(compute: {
  readonly accelerator: string | undefined;
  readonly instanceType: string | undefined;
  readonly instanceSize: string | undefined;
}): string | undefined {
  const { instanceType, instanceSize } = compute;
  if (instanceType === undefined) return undefined;
  // Older endpoints may not echo the accelerator: an nvidia-* instance is a GPU.
  const accelerator = compute.accelerator ?? (instanceType.startsWith("nvidia-") ? "gpu" : "");
  const name = gpuName({ instanceType, accelerator });
  const count = /^x(\d+)$/.exec(instanceSize ?? "")?.[1];
  return count === undefined ? name : gpuLabel(name, Number(count));
}

/**
 * A Hugging Face Jobs flavor's GPU: from its hardware entry when HF listed it (`accelerator.model`
 * and `quantity`), else read from the flavor's name (`l4x1` → "L4 ×1", `a10g-largex2` → "A10G ×2",
 * `a100-large` → "A100 ×1"). A CPU flavor shows its name.
 */
export function jobGpuLabel(
  flavor: string,
  listed?: { readonly gpuModel: string | null; readonly gpuCount: number },
): string {
  if (listed !== undefined)
    return listed.gpuModel === null ? flavor : gpuLabel(listed.gpuModel, Math.max(1, listed.gpuCount));
  if (flavor.startsWith("cpu-")) return flavor;
  const parts = /^(.+?)(?:-(?:small|medium|large))?(?:x(\d+))?$/.exec(flavor);
  if (parts?.[1] === undefined) return flavor;
  return gpuLabel(parts[1].replace(/-/g, " ").toUpperCase(), Number(parts[2] ?? 1));
}

/** A Runpod pod's GPU: its type id and count, as the pod reports them ("NVIDIA L40S ×2"). */
export function podGpuLabel(gpu: { readonly id: string; readonly count: number }): string {
  return gpuLabel(gpu.id, Math.max(1, gpu.count));
}
