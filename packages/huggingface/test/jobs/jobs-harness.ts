/**
 * Test harness for the Jobs adapter: the Hugging Face emulator (Jobs on its hub host) over HTTPS
 * with a throwaway CA and virtual time, an HTTPS Jobs transport trusting that CA whose waits are
 * recorded instead of slept, a port probe, and the provider on top with a Clock reading the
 * emulator's time.
 */

import {
  startHuggingFaceEmulator,
  type HuggingFaceEmulator,
  type JobsEmulatorOptions,
} from "@pair/emulators";
import type { CreateRequest, DeploymentSpec } from "@pair/provision";
import { createTestCa } from "@pair/testkit";
import {
  HF_JOB_PROVIDER,
  HfToken,
  HttpsJobsTransport,
  HuggingFaceJobsProvider,
  httpsPortProbe,
  type HttpsJobsTransportOptions,
  type HuggingFaceJobsProviderOptions,
  type PortProbe,
} from "../../src/index.js";
import { EmulatorClock } from "../adapter/adapter-harness.js";

export const NS = "alice";
export const OWNER = "pair-sponsor-0001";
export const ALICE = "hf_alice_jobs_token_1";
export const BOB = "hf_bob_jobs_token_001";
export const MODEL_SECRET = "hf_model_download_secret_1";
export const MIN = 60_000;

export interface JobsHarness {
  readonly emu: HuggingFaceEmulator;
  readonly caPem: string;
  readonly sleeps: number[];
  readonly clock: EmulatorClock;
  readonly transport: HttpsJobsTransport;
  readonly probe: PortProbe;
  readonly provider: HuggingFaceJobsProvider;
  adapter(overrides?: Partial<HuggingFaceJobsProviderOptions>): HuggingFaceJobsProvider;
  newTransport(overrides?: Partial<HttpsJobsTransportOptions>): HttpsJobsTransport;
  close(): Promise<void>;
}

let tlsPromise: Promise<{ caPem: string; key: string; cert: string }> | undefined;
function tls(): Promise<{ caPem: string; key: string; cert: string }> {
  tlsPromise ??= (async () => {
    const ca = await createTestCa();
    const leaf = await ca.issue();
    return { caPem: ca.certPem, key: leaf.keyPem, cert: leaf.certPem };
  })();
  return tlsPromise;
}

export async function startJobsHarness(jobs: JobsEmulatorOptions = {}): Promise<JobsHarness> {
  const { caPem, key, cert } = await tls();
  const emu = await startHuggingFaceEmulator({
    tls: { key, cert },
    tokens: { [ALICE]: { namespace: NS }, [BOB]: { namespace: "bob" } },
    jobs: { timings: { schedulingMs: 20_000, loadMs: 90_000 }, ...jobs },
  });
  const sleeps: number[] = [];
  let sleptMs = 0;
  const made: HttpsJobsTransport[] = [];
  const newTransport = (overrides: Partial<HttpsJobsTransportOptions> = {}) => {
    const t = new HttpsJobsTransport({
      token: new HfToken(ALICE),
      hubApi: emu.hubApiUrl,
      extraCaPem: caPem,
      sleep: (ms) => {
        sleeps.push(ms);
        sleptMs += ms;
        return Promise.resolve();
      },
      // Recorded waits pass on the transport's clock (a retry-after window ends after them).
      nowMs: () => Date.now() + sleptMs,
      random: () => 0.5,
      ...overrides,
    });
    made.push(t);
    return t;
  };
  const transport = newTransport();
  const prober = httpsPortProbe({ token: new HfToken(ALICE), extraCaPem: caPem });
  const clock = new EmulatorClock(() => emu.nowMs());
  const adapter = (overrides: Partial<HuggingFaceJobsProviderOptions> = {}) =>
    new HuggingFaceJobsProvider({
      transport,
      namespace: NS,
      clock,
      secrets: { HF_TOKEN: new HfToken(MODEL_SECRET) },
      probe: prober.probe,
      ...overrides,
    });
  return {
    emu,
    caPem,
    sleeps,
    clock,
    transport,
    probe: prober.probe,
    provider: adapter(),
    adapter,
    newTransport,
    async close() {
      await Promise.all(made.map((t) => t.close()));
      await prober.close();
      await emu.close();
    },
  };
}

export function jobSpec(name: string, overrides: Partial<DeploymentSpec> = {}): DeploymentSpec {
  return {
    provider: HF_JOB_PROVIDER,
    account: NS,
    name,
    model: "Qwen/Qwen3-0.6B",
    hardware: "l4x1",
    settings: { windowS: 7200 },
    ...overrides,
  };
}

export function jobRequest(
  name: string,
  overrides: Partial<DeploymentSpec> = {},
  requestId = `req-${name}`,
  epoch = 1,
): CreateRequest {
  return { spec: jobSpec(name, overrides), requestId, ownerTag: OWNER, epoch };
}
