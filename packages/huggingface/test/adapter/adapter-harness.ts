/**
 * Test harness for the Inference Endpoints adapter: the Hugging Face emulator over HTTPS (test CA,
 * virtual time), an HTTPS transport trusting that CA, the adapter on top, and a Clock that reads the
 * emulator's virtual time, so the adapter, the controller and the emulator's meter share one clock.
 */

import type { Clock, CreateRequest, DeploymentSpec, Instant } from "@pair/provision";
import {
  HF_ENDPOINT_PROVIDER,
  HuggingFaceEndpointsProvider,
  type HuggingFaceEndpointsProviderOptions,
  type HttpsEndpointsTransport,
} from "../../src/index.js";
import { startTransportHarness, type TransportHarness } from "../transport-harness.js";

export const NS = "alice";
export const OWNER = "pair-sponsor-0001";
export const MIN = 60_000;

/** Reads the emulator's virtual wall time; monotonic time is the same clock from the start. */
export class EmulatorClock implements Clock {
  readonly #read: () => number;
  readonly #startMs: number;

  constructor(read: () => number) {
    this.#read = read;
    this.#startMs = read();
  }

  now(): Instant {
    const wallMs = this.#read();
    return { wallMs, monoMs: wallMs - this.#startMs };
  }
}

export interface AdapterHarness extends TransportHarness {
  readonly clock: EmulatorClock;
  /** The transport the adapter uses (also usable to act as "someone else" on the account). */
  readonly hf: HttpsEndpointsTransport;
  readonly provider: HuggingFaceEndpointsProvider;
  adapter(overrides?: Partial<HuggingFaceEndpointsProviderOptions>): HuggingFaceEndpointsProvider;
}

export async function startAdapterHarness(
  overrides: Partial<HuggingFaceEndpointsProviderOptions> = {},
): Promise<AdapterHarness> {
  const base = await startTransportHarness();
  const clock = new EmulatorClock(() => base.emu.nowMs());
  const hf = base.transport();
  const adapter = (more: Partial<HuggingFaceEndpointsProviderOptions> = {}) =>
    new HuggingFaceEndpointsProvider({ transport: hf, namespace: NS, clock, ...overrides, ...more });
  return Object.assign(base, { clock, hf, provider: adapter(), adapter });
}

export function deploymentSpec(name: string, overrides: Partial<DeploymentSpec> = {}): DeploymentSpec {
  return {
    provider: HF_ENDPOINT_PROVIDER,
    account: NS,
    name,
    model: "Qwen/Qwen3-0.6B",
    hardware: "nvidia-l4",
    region: "us-east-1",
    settings: {
      task: "text-generation",
      imageJson: JSON.stringify({ vLLM: { url: "vllm/vllm-openai:v0.23.0", port: 8000 } }),
    },
    ...overrides,
  };
}

export function createRequest(
  name: string,
  overrides: Partial<DeploymentSpec> = {},
  requestId = `req-${name}`,
  epoch = 1,
): CreateRequest {
  return { spec: deploymentSpec(name, overrides), requestId, ownerTag: OWNER, epoch };
}
