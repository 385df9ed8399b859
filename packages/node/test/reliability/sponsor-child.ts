/**
 * The crash tests' world: the sponsor as a real `pair serve` child process (sponsor-process.ts) with one
 * managed Hugging Face endpoint (`gpu-hf` → alice/qwen) against the HF emulator running in the test
 * process over HTTPS, the token in the real OS credential store. The child's wall clock and the
 * emulator's run on the same virtual time, SCALE times real time, so minutes bill in seconds while
 * the child keeps its default pass interval (10 s real) and poll (1 s real).
 * Must not know: what a test asserts.
 */

import type { HuggingFaceEmulator, JobsEmulatorOptions } from "@pair/emulators";
import { HfToken, HttpsJobsTransport, type HttpsEndpointsTransport } from "@pair/huggingface";
import type { TestCa } from "@pair/testkit";
import { fakeHfToken } from "../support/fake-token.js";
import { SCALE, sponsorProcess, type SponsorProcess } from "./sponsor-process.js";
import {
  aliceEndpoint,
  HF_TIMINGS,
  hfForAlice,
  SPEC,
  type AliceEndpointOptions,
} from "../support/hf-alice.js";

export { freePort, MIN, SCALE, until } from "./sponsor-process.js";
export { SPEC } from "../support/hf-alice.js";

export const NODE = "gpu-hf";
export const MODEL = SPEC.repository;

export interface SponsorChild extends SponsorProcess {
  readonly hf: HuggingFaceEmulator;
  /** The test's own Endpoints API client (alice's token). */
  readonly api: HttpsEndpointsTransport;
  /** The test's own Jobs API client (alice's token): a job made outside the sponsor. */
  readonly jobsApi: HttpsJobsTransport;
  /** The credential reference (`os-credential-store:service/account`) holding the HF token. */
  readonly credentialRef: string;
}

/** More of the world, for other providers (the Hugging Face endpoint node is the default). */
export interface SponsorChildExtra {
  /** The `rented_nodes:` items instead of the `gpu-hf` endpoint node (`lifecycle` is then unused). */
  readonly nodes?: (credentialRef: string) => readonly string[];
  /** The Jobs API's timings (and flavors, page size) in the emulator. */
  readonly jobs?: JobsEmulatorOptions;
  /** alice's endpoint made and brought to a state (`aliceEndpoint`) before the child starts; none unless given. */
  readonly endpoint?: AliceEndpointOptions;
}

/** `lifecycle` are YAML lines for the rented node entry (indented four spaces). */
export async function sponsorChild(
  ca: TestCa,
  lifecycle: readonly string[],
  engine: { tokenDelayMs?: number; maxTokens?: number } = {},
  pendingMs = 30_000,
  extra: SponsorChildExtra = {},
): Promise<SponsorChild> {
  const token = fakeHfToken();
  const originMs = Date.now();
  const { hf, api } = await hfForAlice(ca, token, {
    startMs: originMs,
    timeScale: SCALE,
    timings: { ...HF_TIMINGS, pendingMs },
    engine: { tokenDelayMs: engine.tokenDelayMs ?? 0, maxTokens: engine.maxTokens ?? 4 },
    ...(extra.jobs === undefined ? {} : { jobs: extra.jobs }),
  });
  const jobsApi = new HttpsJobsTransport({
    token: new HfToken(token),
    hubApi: hf.hubApiUrl,
    extraCaPem: ca.certPem,
  });
  const child = await sponsorProcess(ca, {
    node: NODE,
    secrets: { hf: token },
    originMs,
    configLines: (refs) => [
      "rented_nodes:",
      ...(extra.nodes?.(refs["hf"] ?? "") ?? [
        `  - name: ${NODE}`,
        "    provider: huggingface-endpoint",
        "    endpoint: alice/qwen",
        `    credential: ${refs["hf"]}`,
        "    timeouts: { cold_start_s: 30 }",
        "    budget: { unlimited: true }",
        ...lifecycle,
      ]),
      "providers:",
      `  huggingface: { endpoints_api: ${hf.endpointsApiUrl}, hub_api: ${hf.hubApiUrl} }`,
    ],
    nowMs: () => hf.nowMs(),
    close: async () => {
      await api.close();
      await jobsApi.close();
      await hf.close();
    },
  });
  const world = Object.assign(child, { hf, api, jobsApi, credentialRef: child.credentialRefs["hf"] ?? "" });
  if (extra.endpoint !== undefined)
    await aliceEndpoint(world, extra.endpoint).catch(async (cause: unknown) => {
      await world.cleanup(); // the caller never got the world to clean up
      throw cause;
    });
  return world;
}
