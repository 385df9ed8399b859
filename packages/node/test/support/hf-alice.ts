/**
 * Hugging Face as the tests meet it: the emulator over HTTPS on a leaf of the test CA, where `token`
 * is alice's, and PAIR's Endpoints client for it, trusting that CA. The caller closes both.
 * Must not know: which sponsor or world uses it, what a test asserts.
 */

import { startHuggingFaceEmulator, type HuggingFaceEmulator } from "@pair/emulators";
import { HfToken, HttpsEndpointsTransport } from "@pair/huggingface";
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
