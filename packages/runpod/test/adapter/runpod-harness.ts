// Shared setup for the adapter tests and the sponsor's supervisor tests (packages/sponsor/test/runpod):
// the Runpod emulator over HTTPS (test CA) on a ManualClock, the HTTPS transport, and a RunpodProvider.
// Virtual time: `advance` moves the one clock both the emulator and the controller read.
import { startRunpodEmulator, type RunpodEmulator, type RunpodEmulatorOptions } from "@pair/emulators";
import { ManualClock, type DeploymentSpec } from "@pair/provision";
import { createTestCa, type TestCa } from "@pair/testkit";
import {
  HttpsRunpodTransport,
  RedactedString,
  RunpodProvider,
  runpodModelSettings,
  type RunpodModel,
} from "../../src/index.js";

export const API_KEY = "rp_test_key_adapter_0001";
export const VLLM_KEY = "sk-vllm-only-inside-the-pod";
export const OWNER = "pair:node-a";
export const ACCOUNT = "acct-1";

let ca: Promise<{ ca: TestCa; leaf: { certPem: string; keyPem: string } }> | undefined;
export function testCa() {
  ca ??= createTestCa().then(async (c) => ({ ca: c, leaf: await c.issue() }));
  return ca;
}

export const MODEL: RunpodModel = {
  gpuTypes: ["NVIDIA L40S"],
  gpuCount: 1,
  cloudType: "SECURE",
  image: "vllm/vllm-openai:v0.11.0",
  containerDiskGb: 50,
  volumeGb: 20,
  dataCenterIds: [],
  vllmModel: "Qwen/Qwen2.5-7B-Instruct",
  vllmArgs: ["--max-model-len", "8192", "--gpu-memory-utilization", "0.90"],
  port: 8000,
  apiKeySecret: "vllm_key",
  startupDeadlineMs: 600_000,
  idleTimeoutMs: 120_000,
  crashRestartLimit: 2,
  crashWindowMs: 600_000,
};

export function specOf(name: string, model: Partial<RunpodModel> = {}, served = "qwen"): DeploymentSpec {
  const full = { ...MODEL, ...model };
  return {
    provider: "runpod",
    account: ACCOUNT,
    name,
    model: served,
    hardware: full.gpuTypes[0] ?? "",
    settings: runpodModelSettings(full),
  };
}

export interface RunpodWorld {
  readonly clock: ManualClock;
  readonly emu: RunpodEmulator;
  readonly transport: HttpsRunpodTransport;
  readonly provider: RunpodProvider;
  readonly caPem: string;
  advance(ms: number): void;
  close(): Promise<void>;
}

export async function startWorld(options: Partial<RunpodEmulatorOptions> = {}): Promise<RunpodWorld> {
  const { ca, leaf } = await testCa();
  const clock = new ManualClock();
  const emu = await startRunpodEmulator({
    apiKey: API_KEY,
    tls: { key: leaf.keyPem, cert: leaf.certPem },
    secrets: { vllm_key: VLLM_KEY },
    now: () => clock.now().wallMs,
    ...options,
  });
  const transport = new HttpsRunpodTransport({
    baseUrl: emu.apiBaseUrl,
    apiKey: new RedactedString(API_KEY, "runpod key"),
    extraCaPem: ca.certPem,
  });
  const provider = new RunpodProvider({
    transport,
    account: ACCOUNT,
    clock,
    ownerTag: OWNER,
    proxyUrl: (podId, port) => emu.proxyUrl(podId, port),
  });
  return {
    clock,
    emu,
    transport,
    provider,
    caPem: ca.certPem,
    advance: (ms) => void clock.advance(ms),
    close: async () => {
      await transport.close();
      await emu.close();
    },
  };
}
