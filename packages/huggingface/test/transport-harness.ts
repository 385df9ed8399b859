/**
 * Test harness: the Hugging Face emulator over HTTPS with a throwaway CA, and an HTTPS transport
 * that trusts that CA, whose waits between attempts are recorded instead of slept.
 */

import { startHuggingFaceEmulator, type HuggingFaceEmulator } from "@pair/emulators";
import { createTestCa } from "@pair/testkit";
import {
  HfToken,
  HttpsEndpointsTransport,
  type HfEndpointSpec,
  type HttpsTransportOptions,
} from "../src/index.js";

export const ALICE = "hf_alice_transport_token";
export const READER = "hf_alice_read_only_token";

export interface TransportHarness {
  readonly emu: HuggingFaceEmulator;
  readonly caPem: string;
  readonly sleeps: number[];
  transport(overrides?: Partial<HttpsTransportOptions>): HttpsEndpointsTransport;
  close(): Promise<void>;
}

let tlsPromise: Promise<{ caPem: string; key: string; cert: string }> | undefined;
async function tls(): Promise<{ caPem: string; key: string; cert: string }> {
  tlsPromise ??= (async () => {
    const ca = await createTestCa();
    const leaf = await ca.issue();
    return { caPem: ca.certPem, key: leaf.keyPem, cert: leaf.certPem };
  })();
  return tlsPromise;
}

export async function startTransportHarness(): Promise<TransportHarness> {
  const { caPem, key, cert } = await tls();
  const emu = await startHuggingFaceEmulator({
    tls: { key, cert },
    tokens: { [ALICE]: { namespace: "alice" }, [READER]: { namespace: "alice", role: "read" } },
    timings: { pendingMs: 30_000, initializingMs: 120_000, scaleUpMs: 60_000, updatingMs: 60_000 },
  });
  const sleeps: number[] = [];
  // The transports' wall time moves by what they slept (a retry-after window passes when waited out).
  let sleptMs = 0;
  const made: HttpsEndpointsTransport[] = [];
  return {
    emu,
    caPem,
    sleeps,
    transport(overrides = {}) {
      const transport = new HttpsEndpointsTransport({
        token: new HfToken(ALICE),
        endpointsApi: emu.endpointsApiUrl,
        hubApi: emu.hubApiUrl,
        catalogApi: emu.catalogApiUrl,
        extraCaPem: caPem,
        sleep: (ms) => {
          sleeps.push(ms);
          sleptMs += ms;
          return Promise.resolve();
        },
        nowMs: () => Date.now() + sleptMs,
        random: () => 0.5,
        ...overrides,
      });
      made.push(transport);
      return transport;
    },
    async close() {
      await Promise.all(made.map((t) => t.close()));
      await emu.close();
    },
  };
}

export function spec(name: string, overrides: Partial<HfEndpointSpec> = {}): HfEndpointSpec {
  return {
    name,
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
    task: "text-generation",
    image: { vLLM: { url: "vllm/vllm-openai:v0.23.0", port: 8000, healthRoute: "/health" } },
    secrets: { HF_TOKEN: "hf_secret_passed_to_the_container" },
    ...overrides,
  };
}
