/**
 * Hugging Face as the tests meet it: the emulator over HTTPS on a leaf of the test CA, where `token`
 * is alice's, and PAIR's Endpoints client for it, trusting that CA. The caller closes both. And
 * alice's endpoint of the seed (alice/qwen), made and brought to the state a test starts from.
 * Must not know: which sponsor or world uses it, what a test asserts.
 */

import { startHuggingFaceEmulator, type HuggingFaceEmulator } from "@pair/emulators";
import { HfToken, HttpsEndpointsTransport, vllmImage, type HfEndpointSpec } from "@pair/huggingface";
import type { TestCa } from "@pair/testkit";

/** Hugging Face's own pace: pending 30 s, initializing 60 s; for tests that step the clock. */
export const HF_TIMINGS = {
  pendingMs: 30_000,
  initializingMs: 60_000,
  scaleUpMs: 30_000,
  updatingMs: 30_000,
};
/** Every state change in a second, for tests that wait in real time. */
export const QUICK_HF_TIMINGS = {
  pendingMs: 1_000,
  initializingMs: 1_000,
  scaleUpMs: 1_000,
  updatingMs: 1_000,
};

/** The endpoint of the seed: 1× L4 ($0.80/hr), scale-to-zero after 15 min. */
export const SPEC: HfEndpointSpec = {
  name: "qwen",
  accessType: "private",
  vendor: "aws",
  region: "us-east-1",
  accelerator: "gpu",
  instanceType: "nvidia-l4",
  instanceSize: "x1",
  minReplica: 0,
  maxReplica: 1,
  scaleToZeroTimeoutMin: 15,
  repository: "Qwen/Qwen3-0.6B",
  // An engine that serves /v1 (HF's default image, the Inference Toolkit, does not).
  framework: "custom",
  image: vllmImage(),
};

export type HfAliceOptions = Omit<
  NonNullable<Parameters<typeof startHuggingFaceEmulator>[0]>,
  "tls" | "tokens"
>;

export interface HfAlice {
  readonly hf: HuggingFaceEmulator;
  readonly api: HttpsEndpointsTransport;
}

/** The emulator (timings HF_TIMINGS unless `options` says otherwise) and alice's Endpoints client. */
export async function hfForAlice(ca: TestCa, token: string, options: HfAliceOptions = {}): Promise<HfAlice> {
  const leaf = await ca.issue();
  const hf = await startHuggingFaceEmulator({
    tls: { key: leaf.keyPem, cert: leaf.certPem },
    tokens: { [token]: { namespace: "alice" } },
    timings: HF_TIMINGS,
    ...options,
  });
  const api = new HttpsEndpointsTransport({
    token: new HfToken(token),
    endpointsApi: hf.endpointsApiUrl,
    hubApi: hf.hubApiUrl,
    extraCaPem: ca.certPem,
  });
  return { hf, api };
}

/** How a test's world has alice's endpoint before its sponsor first looks (`aliceEndpoint`); `{}`: alice/qwen just made, pending. */
export interface AliceEndpointOptions {
  /** The endpoint made; SPEC (alice/qwen) unless given. */
  readonly spec?: HfEndpointSpec;
  /** Also alice/someone-elses, the same spec otherwise: alice's, but no sponsor's to touch. */
  readonly other?: boolean;
  /** Brought up on the emulator's clock, 2 min (HF_TIMINGS: pending 30 s + initializing 60 s). */
  readonly running?: boolean;
  /** Then paused: once running if `running`, else straight from pending. */
  readonly paused?: boolean;
}

/** Makes alice's endpoint (and `other`) through `api`, moves `hf`'s clock and pauses it as `options` say. */
export async function aliceEndpoint({ hf, api }: HfAlice, options: AliceEndpointOptions = {}): Promise<void> {
  const spec = options.spec ?? SPEC;
  await api.createEndpoint("alice", spec);
  if (options.other === true) await api.createEndpoint("alice", { ...spec, name: "someone-elses" });
  if (options.running === true) hf.advance(120_000);
  if (options.paused === true) await api.pause("alice", spec.name);
}
