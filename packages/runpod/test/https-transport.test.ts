import { once } from "node:events";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { inspect } from "node:util";
import {
  DEFAULT_TIMINGS,
  startRunpodEmulator,
  type RunpodEmulator,
  type RunpodEmulatorOptions,
} from "@pair/emulators";
import { createTestCa, type TestCa } from "@pair/testkit";
import { Agent, request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HttpsRunpodTransport, RedactedString, RunpodApiError, type CreatePodRequest } from "../src/index.js";

const KEY = "rp_live_like_key_42";
const T = DEFAULT_TIMINGS;
let ca: TestCa;
let leaf: { certPem: string; keyPem: string };
beforeAll(async () => {
  ca = await createTestCa();
  leaf = await ca.issue();
});

const emulators: RunpodEmulator[] = [];
const transports: HttpsRunpodTransport[] = [];
afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close()));
  await Promise.all(emulators.splice(0).map((e) => e.close()));
});

async function setup(options: Partial<RunpodEmulatorOptions> = {}, key = KEY) {
  const emu = await startRunpodEmulator({
    apiKey: KEY,
    tls: { key: leaf.keyPem, cert: leaf.certPem },
    secrets: { vllm_key: "sk-only-inside-the-pod" },
    ...options,
  });
  emulators.push(emu);
  const transport = new HttpsRunpodTransport({
    baseUrl: emu.apiBaseUrl,
    apiKey: new RedactedString(key, "runpod key"),
    extraCaPem: ca.certPem,
  });
  transports.push(transport);
  return { emu, transport };
}

const podRequest: CreatePodRequest = {
  name: "pair-n1-qwen-7f3a",
  image: "vllm/vllm-openai:v0.11.0",
  gpu: { id: "NVIDIA L40S", count: 1 },
  ports: ["8000/http"],
  disk: 50,
  mounts: { persistent: { size: 60, path: "/workspace" } },
  env: { VLLM_API_KEY: "{{ RUNPOD_SECRET_vllm_key }}", PAIR_OWNER: "node-1", PAIR_EPOCH: "3" },
  args: "--model Qwen/Qwen2.5-7B-Instruct --served-model-name qwen --max-model-len 8192 --port 8000",
};

async function failure(promise: Promise<unknown>): Promise<RunpodApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RunpodApiError) return error;
    throw error;
  }
  throw new Error("expected a RunpodApiError, the call succeeded");
}

describe("HttpsRunpodTransport against the emulator over real HTTPS", () => {
  it("round-trips create, list, get, stop, start and delete; name and env read back as created", async () => {
    const { emu, transport } = await setup();
    const created = await transport.createPod(podRequest);
    expect(created).toMatchObject({
      name: podRequest.name,
      env: podRequest.env,
      status: "PROVISIONING",
      cost: 0.79,
    });
    expect(created.gpu).toEqual({ id: "NVIDIA L40S", count: 1 });

    const listed = await transport.listPods();
    expect(listed.map((pod) => [pod.id, pod.name, pod.env])).toEqual([
      [created.id, podRequest.name, podRequest.env],
    ]);
    expect(transport.lastRateLimit()?.windows).toContainEqual({
      name: "minute",
      quota: 60,
      windowSeconds: 60,
      remaining: 58,
      resetSeconds: 60,
    });

    emu.advance(T.provisionMs + T.imagePullMs);
    const running = await transport.getPod(created.id);
    expect(running).toMatchObject({
      status: "RUNNING",
      actions: ["stop", "restart", "terminate"],
      runtime: { uptime: 0 },
    });

    const stopped = await transport.podAction(created.id, "stop");
    expect(stopped).toMatchObject({ status: "EXITED", cost: 0 });
    expect((await transport.podAction(created.id, "start"))?.status).toBe("STARTING");

    expect(await transport.deletePod(created.id)).toBe("deleted");
    expect((await transport.getPod(created.id))?.status).toBe("TERMINATED");
    emu.advance(T.terminatedVisibleMs);
    expect(await transport.getPod(created.id)).toBeUndefined();
    expect(await transport.listPods()).toEqual([]);
    expect(await transport.deletePod(created.id)).toBe("not_found");
  });

  it("terminate through the action route answers 204: undefined", async () => {
    const { transport } = await setup();
    const created = await transport.createPod(podRequest);
    expect(await transport.podAction(created.id, "terminate")).toBeUndefined();
  });

  it("parses problem+json: 422 with errors[], 409 for an action the status forbids, 400 for an unknown GPU", async () => {
    const { transport } = await setup();
    const invalid = await failure(
      transport.createPod({ ...podRequest, gpu: { id: "NVIDIA L40S", count: 0 } }),
    );
    expect(invalid).toMatchObject({
      kind: "invalid_request",
      status: 422,
      title: "Unprocessable Entity",
      detail: "Request validation failed.",
      errors: ["$.gpu.count: minimum: got 0, want 1"],
      retryable: false,
    });
    const created = await transport.createPod(podRequest);
    const conflict = await failure(transport.podAction(created.id, "restart"));
    expect(conflict).toMatchObject({ kind: "conflict", status: 409 });
    expect(conflict.message).toMatch(/not valid for a pod in status PROVISIONING/);
    const unknown = await failure(transport.createPod({ ...podRequest, gpu: { id: "NVIDIA Z9" } }));
    expect(unknown).toMatchObject({ kind: "invalid_request", status: 400 });
  });

  it("maps a bad key to unauthorized, and never shows the key in errors or logs", async () => {
    const { transport } = await setup({}, "rp_wrong_key_000");
    const error = await failure(transport.listPods());
    expect(error).toMatchObject({
      kind: "unauthorized",
      status: 401,
      detail: "invalid bearer token",
      retryable: false,
    });
    const key = new RedactedString("rp_wrong_key_000");
    expect(`${String(key)} ${JSON.stringify({ key })} ${inspect(key)}`).not.toContain("rp_wrong_key_000");
    expect(`${error.message} ${inspect(error)} ${inspect(transport)}`).not.toContain("rp_wrong_key_000");
  });

  it("no capacity: a definite, retryable refusal (the caller may try the next GPU type); nothing created", async () => {
    const { emu, transport } = await setup();
    emu.faults.outOfCapacity("NVIDIA L40S");
    const error = await failure(transport.createPod(podRequest));
    expect(error).toMatchObject({ kind: "no_capacity", status: 400, retryable: true });
    expect(await transport.listPods()).toEqual([]);
    expect((await transport.createPod({ ...podRequest, gpu: { id: "NVIDIA A40" } })).gpu?.id).toBe(
      "NVIDIA A40",
    );
  });

  it("a start refused for want of GPUs on the host is no_capacity too", async () => {
    const { emu, transport } = await setup();
    const created = await transport.createPod(podRequest);
    await transport.podAction(created.id, "stop");
    emu.faults.outOfCapacity("NVIDIA L40S");
    expect(await failure(transport.podAction(created.id, "start"))).toMatchObject({ kind: "no_capacity" });
  });

  it("a lost create answer is uncertain, never retried, and the pod shows up in the next listing", async () => {
    const { emu, transport } = await setup();
    emu.faults.loseCreateAnswers();
    const error = await failure(transport.createPod(podRequest));
    expect(error).toMatchObject({ kind: "uncertain", operation: "createPod", retryable: false });
    expect(error.message).toMatch(/list pods by name to reconcile/);
    expect(emu.pods.list()).toHaveLength(1); // one create reached the provider: the transport did not retry
    const listed = await transport.listPods();
    expect(listed.filter((pod) => pod.name === podRequest.name)).toHaveLength(1);
    expect(listed[0]?.env).toEqual(podRequest.env);
  });

  it("5xx on the next calls: server (retryable) for reads, uncertain for a create", async () => {
    const { emu, transport } = await setup();
    emu.faults.failNextCalls(2, 503);
    expect(await failure(transport.listPods())).toMatchObject({
      kind: "server",
      status: 503,
      retryable: true,
    });
    expect(await failure(transport.createPod(podRequest))).toMatchObject({ kind: "uncertain", status: 503 });
    expect(await transport.listPods()).toEqual([]);
  });

  it("429 carries retryAfterMs and the rate-limit state", async () => {
    const { transport } = await setup({ rateLimit: { minute: 1 } });
    await transport.listPods();
    const error = await failure(transport.listPods());
    expect(error).toMatchObject({ kind: "rate_limited", status: 429, retryAfterMs: 60_000, retryable: true });
    expect(error.rateLimit?.windows[0]).toMatchObject({ name: "minute", remaining: 0 });
  });

  it("after a 429 with Retry-After nothing is sent until it has passed", async () => {
    const { emu, transport } = await setup();
    emu.faults.rateLimitNext(1, 60);
    expect(await failure(transport.listPods())).toMatchObject({ kind: "rate_limited", status: 429 });
    const held = await failure(transport.getPod("any"));
    expect(held).toMatchObject({ kind: "rate_limited", status: undefined, retryable: true });
    expect(held.retryAfterMs).toBeGreaterThan(50_000);
    expect(held.message).toContain("not sent");
    expect(emu.requests()).toHaveLength(1);
  });

  it("shows slow start, crash loop and an unrequested exit in the pod's status", async () => {
    const { emu, transport } = await setup();
    emu.faults.slowStart(300_000);
    const slow = await transport.createPod(podRequest);
    emu.faults.slowStart(0);
    emu.faults.crashLoopNewPods(true);
    const looping = await transport.createPod({ ...podRequest, name: "pair-loop" });
    emu.faults.crashLoopNewPods(false);
    emu.advance(T.provisionMs + T.imagePullMs);
    expect((await transport.getPod(slow.id))?.status).toBe("STARTING");
    expect((await transport.getPod(looping.id))?.status).toBe("RUNNING");
    emu.advance(T.crashLoopUpMs);
    expect((await transport.getPod(looping.id))?.status).toBe("STARTING");
    emu.advance(300_000);
    expect((await transport.getPod(slow.id))?.status).toBe("RUNNING");
    emu.faults.exitPod(slow.id);
    expect(await transport.getPod(slow.id)).toMatchObject({ status: "EXITED", cost: 0 });
  });

  it("a client that does not trust the emulator's CA fails with kind tls, before sending anything", async () => {
    const { emu } = await setup();
    const other = await createTestCa("some other CA");
    for (const extraCaPem of [undefined, other.certPem]) {
      const untrusting = new HttpsRunpodTransport({
        baseUrl: emu.apiBaseUrl,
        apiKey: new RedactedString(KEY),
        ...(extraCaPem ? { extraCaPem } : {}),
      });
      transports.push(untrusting);
      const error = await failure(untrusting.createPod(podRequest));
      expect(error).toMatchObject({ kind: "tls", retryable: false });
    }
    expect(emu.pods.list()).toEqual([]);
  });

  it("refuses an http:// base URL and appends /v2 to the origin once", async () => {
    expect(
      () => new HttpsRunpodTransport({ baseUrl: "http://api.runpod.io", apiKey: new RedactedString(KEY) }),
    ).toThrow(/must be https/);
    const { emu } = await setup();
    const withV2 = new HttpsRunpodTransport({
      baseUrl: `${emu.apiBaseUrl}/v2/`,
      apiKey: new RedactedString(KEY),
      extraCaPem: ca.certPem,
    });
    transports.push(withV2);
    expect(await withV2.listPods()).toEqual([]);
  });
});

describe("timeouts and unreachable hosts", () => {
  let silent: ReturnType<typeof createServer>;
  let silentPort: number;
  beforeAll(async () => {
    silent = createServer({ key: leaf.keyPem, cert: leaf.certPem }, () => undefined); // reads, never answers
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    silentPort = (silent.address() as AddressInfo).port;
  });
  afterAll(() => {
    silent.closeAllConnections();
    silent.close();
  });

  const transportTo = (port: number) => {
    const transport = new HttpsRunpodTransport({
      baseUrl: `https://127.0.0.1:${port}`,
      apiKey: new RedactedString(KEY),
      extraCaPem: ca.certPem,
      headersTimeoutMs: 150,
    });
    transports.push(transport);
    return transport;
  };

  it("a create sent but unanswered in time is uncertain; a read is a retryable timeout", async () => {
    const transport = transportTo(silentPort);
    const [create, list] = await Promise.all([
      failure(transport.createPod(podRequest)),
      failure(transport.listPods()),
    ]);
    expect(create).toMatchObject({ kind: "uncertain" });
    expect(list).toMatchObject({ kind: "timeout", retryable: true });
  });

  it("a create that could not connect is network, not uncertain: nothing reached Runpod", async () => {
    const closed = createServer({ key: leaf.keyPem, cert: leaf.certPem });
    closed.listen(0, "127.0.0.1");
    await once(closed, "listening");
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    await once(closed, "close");
    expect(await failure(transportTo(port).createPod(podRequest))).toMatchObject({
      kind: "network",
      retryable: true,
    });
  });
});

describe("the pod proxy through HTTPS (what the adapter's readiness and calls will see)", () => {
  it("502 while loading, 401 on a wrong vLLM key, streaming SSE once serving", async () => {
    const { emu, transport } = await setup({ tokenDelayMs: 1 });
    const pod = await transport.createPod(podRequest);
    const agent = new Agent({ connect: { ca: ca.certPem } });
    try {
      const base = `${emu.proxyUrl(pod.id, 8000)}/v1`;
      const chat = (key: string, stream = false) =>
        request(`${base}/chat/completions`, {
          method: "POST",
          dispatcher: agent,
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({
            model: "qwen",
            messages: [{ role: "user", content: "hi" }],
            max_tokens: 4,
            stream,
          }),
        });
      const loading = await chat("sk-only-inside-the-pod");
      expect(loading.statusCode).toBe(502);
      await loading.body.dump();
      emu.advance(T.provisionMs + T.imagePullMs + T.modelLoadMs);
      const wrong = await chat("sk-guess");
      expect(wrong.statusCode).toBe(401);
      expect(await wrong.body.json()).toEqual({ error: "Unauthorized" });
      const streamed = await chat("sk-only-inside-the-pod", true);
      expect(streamed.statusCode).toBe(200);
      expect(streamed.headers["content-type"]).toMatch(/^text\/event-stream/);
      const text = await streamed.body.text();
      expect(text.trim().endsWith("data: [DONE]")).toBe(true);
      expect(text.match(/^data: /gm)?.length).toBeGreaterThanOrEqual(6);
    } finally {
      await agent.close();
    }
  });
});

describe("billing meter under the virtual clock, read next to the transport", () => {
  it("charges compute while up and the stopped-volume rate while EXITED; delete stops the meter", async () => {
    const { emu, transport } = await setup();
    const pod = await transport.createPod(podRequest);
    emu.advance(2 * 3_600_000);
    // 2 h × $0.79 + 110 GB (50 disk + 60 volume) × $0.10/GB-month × 2/720 month.
    expect(emu.meter.charges(pod.id)).toMatchObject({ computeMicroUsd: 1_580_000, storageMicroUsd: 30_555 });
    await transport.podAction(pod.id, "stop");
    emu.advance(24 * 3_600_000);
    // + 60 GB × $0.20/GB-month × 24/720 month = $0.40.
    expect(emu.meter.totalMicroUsd(pod.id)).toBe(1_580_000 + 30_555 + 400_000);
    await transport.deletePod(pod.id);
    emu.advance(30 * 24 * 3_600_000);
    expect(emu.meter.totalMicroUsd(pod.id)).toBe(2_010_555);
  });
});
