// The checks the seed lists as "Not verified" against the live Runpod control plane, written once
// and run against any target: the emulator (always, in virtual time) and live Runpod (only with
// PAIR_LIVE_RUNPOD_KEY). Each step names what it verifies. A pod this creates is always deleted in
// `finally`, and a pod whose hourly price would exceed the budget before the deadline is deleted
// at once.
import { expect } from "vitest";
import type { Clock } from "@pair/provision";
import {
  HttpsVllmProbe,
  IDENTITY_ENV,
  RunpodApiError,
  RunpodProvider,
  runpodModelSettings,
  type ProxyUrlOf,
  type RunpodModel,
  type RunpodTransport,
  type SecretString,
} from "../../src/index.js";

export interface ConformanceTarget {
  readonly transport: RunpodTransport;
  readonly account: string;
  readonly clock: Clock;
  /** Let time pass: virtual (emulator) or real (live). */
  wait(ms: number): Promise<void>;
  readonly proxyUrl?: ProxyUrlOf;
  readonly extraCaPem?: string;
  /** The Runpod secret that holds the vLLM key, and the key itself (for probing only). */
  readonly secretName: string;
  readonly vllmKey: SecretString;
  readonly gpuTypes: readonly string[];
  readonly cloudType: "SECURE" | "COMMUNITY";
  /** Hard limits: the pod is deleted by this deadline, and never allowed to cost more than this. */
  readonly deadlineMs: number;
  readonly maxUsd: number;
  readonly pollMs: number;
  log(line: string): void;
}

export interface ConformanceFindings {
  readonly podId: string;
  readonly envReadBack: boolean;
  readonly secretSubstituted: boolean;
  readonly proxyUrl: string;
  readonly deleteEndedBilling: boolean;
  readonly worstCaseUsd: number;
  /** v2's answer to a create no machine can take (64 GPUs of one type), as PAIR classified it. */
  readonly createRefusal: CreateRefusalSeen;
}

export interface CreateRefusalSeen {
  readonly status: number | undefined;
  /** PAIR's reading: `no_capacity` moves to the next GPU type; anything unclassified stops. */
  readonly kind: string;
  readonly title: string | undefined;
  readonly detail: string | undefined;
}

/**
 * 5. How v2 words a create no machine can take (free text, status and `errors`, as PAIR classifies
 * them: capacity → next GPU type, anything unclassified → stop). Nothing should be created; if
 * Runpod accepts it after all, the pod is deleted at once. Real capacity refusals cannot be provoked
 * on demand; this records the nearest answer.
 */
async function createRefusal(target: ConformanceTarget, name: string): Promise<CreateRefusalSeen> {
  try {
    const pod = await target.transport.createPod({
      name: `${name}-refusal`,
      image: "vllm/vllm-openai:v0.11.0",
      gpu: { id: target.gpuTypes[0] ?? "", count: 64 },
      disk: 20,
      env: { [IDENTITY_ENV.owner]: OWNER },
      cloud: target.cloudType,
    });
    target.log(`a 64-GPU create was accepted (${pod.id}): deleting it`);
    await target.transport.deletePod(pod.id);
    return { status: 200, kind: "accepted", title: undefined, detail: `pod ${pod.id}, deleted` };
  } catch (error) {
    if (!(error instanceof RunpodApiError)) throw error;
    return { status: error.status, kind: error.kind, title: error.title, detail: error.detail };
  }
}

const OWNER = "pair:live-conformance";

export function conformanceModel(target: ConformanceTarget): RunpodModel {
  return {
    gpuTypes: target.gpuTypes,
    gpuCount: 1,
    cloudType: target.cloudType,
    image: "vllm/vllm-openai:v0.11.0",
    containerDiskGb: 20,
    volumeGb: 0,
    dataCenterIds: [],
    vllmModel: "Qwen/Qwen2.5-0.5B-Instruct",
    vllmArgs: ["--max-model-len", "2048", "--gpu-memory-utilization", "0.80"],
    port: 8000,
    apiKeySecret: target.secretName,
    startupDeadlineMs: target.deadlineMs,
    idleTimeoutMs: 60_000,
    crashRestartLimit: 2,
    crashWindowMs: 600_000,
  };
}

export async function runConformance(target: ConformanceTarget): Promise<ConformanceFindings> {
  const provider = new RunpodProvider({
    transport: target.transport,
    account: target.account,
    clock: target.clock,
    ownerTag: OWNER,
    ...(target.proxyUrl === undefined ? {} : { proxyUrl: target.proxyUrl }),
  });
  const started = target.clock.now().wallMs;
  const requestId = `live-${started.toString(36)}`;
  const name = `pair-conformance-${started.toString(36)}`;
  const spec = {
    provider: "runpod",
    account: target.account,
    name,
    model: "conformance",
    hardware: target.gpuTypes[0] ?? "",
    settings: runpodModelSettings(conformanceModel(target)),
  };
  const probe = new HttpsVllmProbe({
    apiKey: target.vllmKey,
    timeoutMs: 20_000,
    ...(target.extraCaPem === undefined ? {} : { extraCaPem: target.extraCaPem }),
  });
  const wrongKeyProbe = new HttpsVllmProbe({
    apiKey: { reveal: () => "pair-conformance-wrong-key" },
    timeoutMs: 20_000,
    ...(target.extraCaPem === undefined ? {} : { extraCaPem: target.extraCaPem }),
  });
  let podId: string | undefined;
  try {
    // A previous run killed before its `finally` left a pod: delete every pod with our owner tag.
    for (const leftover of await target.transport.listPods())
      if (leftover.env[IDENTITY_ENV.owner] === OWNER && leftover.status !== "TERMINATED") {
        target.log(`deleting pod ${leftover.id} left by an earlier run`);
        await target.transport.deletePod(leftover.id);
      }
    const created = await provider.create({ spec, requestId, ownerTag: OWNER, epoch: 1 });
    if (created.kind === "lost") {
      // Find what the lost answer left behind, so `finally` deletes it.
      await target.wait(target.pollMs);
      const listing = await provider.list();
      podId = listing.resources.find((r) => r.requestId === requestId)?.key.incarnation;
    } else if (created.kind === "created") podId = created.report.key.incarnation;
    expect(created.kind, `create: ${JSON.stringify(created)}`).toBe("created");
    if (podId === undefined) throw new Error("no pod id");
    target.log(`created pod ${podId} on ${created.kind === "created" ? created.report.hardware : "?"}`);

    // Budget: the hourly price Runpod reports, over the whole deadline, must fit the cap.
    const pod = await target.transport.getPod(podId);
    // A price Runpod does not report (0 while provisioning, or absent) counts as 1 USD/h.
    const usdPerHr = pod !== undefined && pod.cost > 0 ? pod.cost : 1;
    const worstCaseUsd = usdPerHr * (target.deadlineMs / 3_600_000);
    target.log(`pod costs ${usdPerHr} USD/h; worst case ${worstCaseUsd.toFixed(3)} USD`);
    expect(worstCaseUsd, `worst case within the ${target.maxUsd} USD budget`).toBeLessThanOrEqual(
      target.maxUsd,
    );

    // 1. The listing returns the env the pod was created with (identity read back).
    const listed = (await target.transport.listPods()).find((p) => p.id === podId);
    const envReadBack =
      listed?.env[IDENTITY_ENV.owner] === OWNER &&
      listed.env[IDENTITY_ENV.requestId] === requestId &&
      listed.env[IDENTITY_ENV.epoch] === "1" &&
      listed.env["VLLM_API_KEY"] === `{{ RUNPOD_SECRET_${target.secretName} }}`;
    expect(envReadBack, `listing env: ${JSON.stringify(listed?.env ?? null)}`).toBe(true);

    // 2 + 4. The proxy URL serves vLLM, and it accepts the secret's value as the key (so the
    // reference was substituted) while refusing another key.
    const report = await provider.describe({
      provider: "runpod",
      account: target.account,
      name,
      incarnation: podId,
    });
    const address = report.kind === "found" ? report.report.address : undefined;
    expect(address, "the pod reports a proxy address").toBeDefined();
    let result = "not-listening";
    while (target.clock.now().wallMs - started < target.deadlineMs - 2 * target.pollMs) {
      result = await probe.probe(address ?? "", "conformance");
      if (result !== "not-listening") break;
      await target.wait(target.pollMs);
    }
    target.log(`probe with the secret's value: ${result}`);
    expect(result, "vLLM serves through the proxy with the secret's value as key").toBe("ready");
    expect(await wrongKeyProbe.probe(address ?? "", "conformance")).toBe("key-refused");

    // 3. DELETE ends billing: the pod is gone (404) or TERMINATED with cost 0.
    const stopped = await provider.stop(
      { provider: "runpod", account: target.account, name, incarnation: podId },
      "terminate",
    );
    expect(stopped.kind).toBe("accepted");
    let after = await target.transport.getPod(podId);
    for (let i = 0; i < 6 && after !== undefined && after.status !== "TERMINATED"; i += 1) {
      await target.wait(target.pollMs);
      after = await target.transport.getPod(podId);
    }
    const deleteEndedBilling = after === undefined || (after.status === "TERMINATED" && after.cost === 0);
    expect(deleteEndedBilling, `after DELETE: ${after?.status ?? "404"} cost ${after?.cost ?? "-"}`).toBe(
      true,
    );
    const proxyUrl = address ?? "";
    podId = undefined; // deleted
    const refusal = await createRefusal(target, name);
    target.log(`a 64-GPU create: ${refusal.status ?? "no answer"} ${refusal.kind}: ${refusal.detail ?? ""}`);
    return {
      createRefusal: refusal,
      podId: listed?.id ?? "",
      envReadBack,
      secretSubstituted: true,
      proxyUrl,
      deleteEndedBilling,
      worstCaseUsd,
    };
  } finally {
    if (podId !== undefined) {
      target.log(`cleaning up pod ${podId}`);
      await target.transport
        .deletePod(podId)
        .catch((e: unknown) => target.log(`DELETE failed: ${String(e)}`));
    }
    await probe.close();
    await wrongKeyProbe.close();
  }
}
