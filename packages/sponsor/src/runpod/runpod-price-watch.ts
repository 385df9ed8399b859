/**
 * A RunpodTransport that passes every call through and remembers what Runpod says a pod costs: the
 * pod's `cost` (USD per hour now, 0 once EXITED or TERMINATED) and its GPU (type and count), as every
 * create, listing and lookup reports them. The sponsor prices its ledger from it: the GPU type actually
 * placed (after capacity fallback), at the price Runpod's catalogue charges for it. Listings carry
 * every pod of the account: the caller keeps only its own (`created`, or a pod id it holds).
 * Must not know: the ledger, the controller, HTTP.
 */

import type {
  CallOptions,
  CreatePodRequest,
  GpuCatalogEntry,
  Pod,
  PodAction,
  RunpodTransport,
} from "@pair/runpod";

export interface PodPrice {
  readonly usdPerHour: number;
  /** The GPU type placed and how many, as the pod reports them (`gpu.id`, `gpu.count`). */
  readonly gpu: { readonly id: string; readonly count: number } | undefined;
}

export class PriceWatchingTransport implements RunpodTransport {
  readonly #inner: RunpodTransport;
  readonly #onPrice: (podId: string, price: PodPrice, created: boolean) => void;

  constructor(inner: RunpodTransport, onPrice: (podId: string, price: PodPrice, created: boolean) => void) {
    this.#inner = inner;
    this.#onPrice = onPrice;
  }

  async createPod(request: CreatePodRequest, options?: CallOptions): Promise<Pod> {
    return this.#seen(await this.#inner.createPod(request, options), true);
  }

  async listPods(options?: CallOptions): Promise<Pod[]> {
    const pods = await this.#inner.listPods(options);
    for (const pod of pods) this.#seen(pod);
    return pods;
  }

  async getPod(podId: string, options?: CallOptions): Promise<Pod | undefined> {
    const pod = await this.#inner.getPod(podId, options);
    return pod === undefined ? undefined : this.#seen(pod);
  }

  async podAction(podId: string, action: PodAction, options?: CallOptions): Promise<Pod | undefined> {
    const pod = await this.#inner.podAction(podId, action, options);
    return pod === undefined ? undefined : this.#seen(pod);
  }

  deletePod(podId: string, options?: CallOptions): Promise<"deleted" | "not_found"> {
    return this.#inner.deletePod(podId, options);
  }

  listGpuCatalog(options?: CallOptions): Promise<GpuCatalogEntry[]> {
    return this.#inner.listGpuCatalog(options);
  }

  lastRateLimit() {
    return this.#inner.lastRateLimit();
  }

  /** Only a billing price tells: 0 is what an EXITED or TERMINATED pod reports. */
  #seen(pod: Pod, created = false): Pod {
    if (pod.cost > 0) this.#onPrice(pod.id, { usdPerHour: pod.cost, gpu: pod.gpu }, created);
    return pod;
  }
}
