import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { startRunpodEmulator, type RunpodEmulator, type RunpodEmulatorOptions } from "../../src/index.js";
import { DEFAULT_TIMINGS } from "../../src/runpod/options.js";
import { sseData } from "../wire-readers.js";

const KEY = "rp_test_key_0001";
const T = DEFAULT_TIMINGS;
const open: RunpodEmulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((emu) => emu.close()));
});

async function emulator(options: Partial<RunpodEmulatorOptions> = {}): Promise<RunpodEmulator> {
  const emu = await startRunpodEmulator({ apiKey: KEY, secrets: { vllm_key: "sk-pod-key" }, ...options });
  open.push(emu);
  return emu;
}

function api(emu: RunpodEmulator, path: string, init: RequestInit = {}, key = KEY): Promise<Response> {
  return fetch(`${emu.apiBaseUrl}/v2${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...init.headers },
  });
}

const vllmPod = {
  name: "pair-n1-qwen",
  image: "vllm/vllm-openai:v0.11.0",
  gpu: { id: "NVIDIA L40S", count: 1 },
  ports: ["8000/http"],
  env: { VLLM_API_KEY: "{{ RUNPOD_SECRET_vllm_key }}" },
  args: "--model Qwen/Qwen2.5-7B-Instruct --served-model-name qwen --port 8000",
};

async function createPod(emu: RunpodEmulator, body: object = vllmPod): Promise<{ id: string }> {
  const res = await api(emu, "/pods", { method: "POST", body: JSON.stringify(body) });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string };
}

describe("control plane over HTTP", () => {
  it("refuses a missing or wrong key with a 401 problem", async () => {
    const emu = await emulator();
    const none = await fetch(`${emu.apiBaseUrl}/v2/pods`);
    expect(none.status).toBe(401);
    expect(none.headers.get("content-type")).toBe("application/problem+json");
    expect(await none.json()).toEqual({ title: "Unauthorized", status: 401, detail: "missing bearer token" });
    const wrong = await api(emu, "/pods", {}, "rp_wrong_key_0000");
    expect(await wrong.json()).toMatchObject({ status: 401, detail: "invalid bearer token" });
  });

  it("creates (201), lists wrapped, gets, acts and deletes (204) with rate-limit headers on each answer", async () => {
    const emu = await emulator();
    const pod = await createPod(emu);
    const list = await api(emu, "/pods");
    expect(list.headers.get("ratelimit-policy")).toBe(
      '"minute";q=60;w=60, "hour";q=3000;w=3600, "day";q=50000;w=86400',
    );
    expect(list.headers.get("ratelimit")).toBe(
      '"minute";r=58;t=60, "hour";r=2998;t=3600, "day";r=49998;t=86400',
    );
    const listed = (await list.json()) as { pods: { id: string; env: object; name: string }[] };
    expect(listed.pods).toEqual([
      expect.objectContaining({ id: pod.id, name: vllmPod.name, env: vllmPod.env }),
    ]);
    const stop = await api(emu, `/pods/${pod.id}/action`, { method: "POST", body: '{"action":"stop"}' });
    expect(await stop.json()).toMatchObject({ status: "EXITED" });
    const bogus = await api(emu, `/pods/${pod.id}/action`, { method: "POST", body: '{"action":"reset"}' });
    expect(await bogus.json()).toMatchObject({
      status: 422,
      errors: ["$.action: value must be one of 'start', 'stop', 'restart', 'terminate'"],
    });
    const del = await api(emu, `/pods/${pod.id}`, { method: "DELETE" });
    expect(del.status).toBe(204);
    expect(await del.text()).toBe("");
    const gone = await api(emu, `/pods/${pod.id}`);
    expect(await gone.json()).toMatchObject({ status: "TERMINATED" });
    emu.advance(T.terminatedVisibleMs);
    const missing = await api(emu, `/pods/${pod.id}`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ title: "Not Found", status: 404, detail: "pod not found" });
    const wrongMethod = await api(emu, `/pods/${pod.id}`, { method: "PUT" });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("GET, DELETE");
  });

  it("answers 429 with Retry-After once the minute quota is spent, and again after the window", async () => {
    const emu = await emulator({ rateLimit: { minute: 2 } });
    emu.advance(30_000);
    expect((await api(emu, "/pods")).status).toBe(200);
    expect((await api(emu, "/pods")).status).toBe(200);
    const limited = await api(emu, "/pods");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("30");
    expect(await limited.json()).toMatchObject({ title: "Too Many Requests", status: 429 });
    emu.advance(30_000);
    expect((await api(emu, "/pods")).status).toBe(200);
  });

  it("fails the next N calls with 5xx and no effect, then answers normally", async () => {
    const emu = await emulator();
    emu.faults.failNextCalls(2, 503);
    const first = await api(emu, "/pods", { method: "POST", body: JSON.stringify(vllmPod) });
    expect(first.status).toBe(503);
    expect((await api(emu, "/pods")).status).toBe(503);
    const after = (await (await api(emu, "/pods")).json()) as { pods: unknown[] };
    expect(after.pods).toEqual([]);
  });

  it("loses a create answer: the connection drops, yet the pod exists and bills", async () => {
    const emu = await emulator();
    emu.faults.loseCreateAnswers();
    await expect(api(emu, "/pods", { method: "POST", body: JSON.stringify(vllmPod) })).rejects.toThrow();
    const [pod] = emu.pods.list();
    expect(pod?.wire.name).toBe(vllmPod.name);
    emu.advance(10_000);
    expect(emu.meter.totalMicroUsd(pod?.wire.id ?? "")).toBeGreaterThan(0);
    await createPod(emu);
    expect(emu.pods.list()).toHaveLength(2);
  });

  it("answers 429 with the injected retry-after, and logs every call with what the faults did", async () => {
    const emu = await emulator();
    emu.faults.rateLimitNext(2, 4);
    const limited = await api(emu, "/pods");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("4");
    expect((await api(emu, "/pods")).status).toBe(429);
    expect((await api(emu, "/pods")).status).toBe(200);
    expect(emu.requests().map((r) => r.fault)).toEqual(["rate-limit", "rate-limit", "none"]);
    expect(emu.requests()[0]).toMatchObject({ method: "GET", path: "/v2/pods", atMs: emu.clock.now() });
  });

  it("loses a terminate answer: the connection drops, yet the pod is terminated", async () => {
    const emu = await emulator();
    const { id } = await createPod(emu);
    emu.faults.loseTerminateAnswers();
    await expect(api(emu, `/pods/${id}`, { method: "DELETE" })).rejects.toThrow();
    expect(emu.pods.get(id)?.wire.status).toBe("TERMINATED");
  });

  it("holds a create: carried out before the answer, or only if released with apply, even after the client left", async () => {
    const emu = await emulator();
    const post = () => api(emu, "/pods", { method: "POST", body: JSON.stringify(vllmPod) });
    // Carried out at once, answer held: the pod exists (and bills) while the client still waits.
    emu.faults.holdNext(1, "create", "before-answer");
    const first = post();
    await emu.faults.whenHeld();
    expect(emu.pods.list()).toHaveLength(1);
    expect(emu.faults.heldCount).toBe(1);
    expect(emu.faults.releaseHeld()).toBe(1);
    expect((await first).status).toBe(201);
    // Held before carrying out, then dropped: nothing is created and the connection is cut.
    emu.faults.holdNext(1, "create");
    const dropped = post();
    await emu.faults.whenHeld();
    expect(emu.pods.list()).toHaveLength(1);
    expect(emu.faults.releaseHeld("drop")).toBe(1);
    await expect(dropped).rejects.toThrow();
    expect(emu.pods.list()).toHaveLength(1);
    // Held, the client gives up, released with apply: carried out with nobody to answer.
    emu.faults.holdNext(1, "create");
    const gone = new AbortController();
    const abandoned = api(emu, "/pods", {
      method: "POST",
      body: JSON.stringify(vllmPod),
      signal: gone.signal,
    });
    await emu.faults.whenHeld();
    gone.abort();
    await expect(abandoned).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 20)); // the server sees the connection close
    expect(emu.faults.releaseHeld("apply")).toBe(1);
    await new Promise((r) => setTimeout(r, 20)); // the held call resumes
    expect(emu.pods.list()).toHaveLength(2);
    // Not armed any more: the next create is answered at once. Every create was seen on arrival.
    expect((await post()).status).toBe(201);
    expect(emu.requests().filter((r) => r.method === "POST" && r.path === "/v2/pods")).toHaveLength(4);
  });

  it("holds a terminate without touching other calls; clear() drops what is held", async () => {
    const emu = await emulator();
    const { id } = await createPod(emu);
    emu.faults.holdNext(1, "terminate");
    const held = api(emu, `/pods/${id}`, { method: "DELETE" });
    await emu.faults.whenHeld();
    expect((await api(emu, `/pods/${id}`)).status).toBe(200); // a GET is not held
    expect(emu.pods.get(id)?.wire.status).not.toBe("TERMINATED");
    emu.faults.clear();
    await expect(held).rejects.toThrow();
    expect(emu.faults.heldCount).toBe(0);
    expect(emu.pods.get(id)?.wire.status).not.toBe("TERMINATED");
    emu.faults.holdNext(1, "terminate", "before-answer");
    const applied = api(emu, `/pods/${id}`, { method: "DELETE" });
    await emu.faults.whenHeld();
    expect(emu.pods.get(id)?.wire.status).toBe("TERMINATED");
    emu.faults.releaseHeld();
    expect((await applied).status).toBe(204);
    expect(() => emu.faults.holdNext(0, "create")).toThrow(RangeError);
  });

  it("hides a pod from the next N listings while its own GET still finds it", async () => {
    const emu = await emulator();
    const { id } = await createPod(emu);
    emu.faults.hideFromListing(id, 2);
    const ids = async () => ((await (await api(emu, "/pods")).json()) as { pods: { id: string }[] }).pods;
    expect(await ids()).toEqual([]);
    expect((await api(emu, `/pods/${id}`)).status).toBe(200);
    expect(await ids()).toEqual([]);
    expect((await ids()).map((p) => p.id)).toEqual([id]);
  });

  it("accepts terminates and stops it never carries out while ignoreStops is on: the pod bills on", async () => {
    const emu = await emulator();
    const { id } = await createPod(emu);
    emu.advance(T.provisionMs + T.imagePullMs + T.modelLoadMs);
    emu.faults.ignoreStops();
    expect((await api(emu, `/pods/${id}`, { method: "DELETE" })).status).toBe(204);
    const stop = await api(emu, `/pods/${id}/action`, {
      method: "POST",
      body: JSON.stringify({ action: "stop" }),
    });
    expect(stop.status).toBe(200);
    const before = emu.meter.totalMicroUsd(id);
    emu.advance(60_000);
    expect(emu.pods.get(id)?.wire.status).toBe("RUNNING");
    expect(emu.meter.totalMicroUsd(id)).toBeGreaterThan(before);
    emu.faults.ignoreStops(false);
    expect((await api(emu, `/pods/${id}`, { method: "DELETE" })).status).toBe(204);
    expect(emu.pods.get(id)?.wire.status).toBe("TERMINATED");
  });

  it("answers the no-capacity problem for a type without free GPUs", async () => {
    const emu = await emulator();
    emu.faults.outOfCapacity("NVIDIA L40S");
    const res = await api(emu, "/pods", { method: "POST", body: JSON.stringify(vllmPod) });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(((await res.json()) as { detail: string }).detail).toMatch(
      /^There are no longer any instances available/,
    );
  });

  it("refuses creates for funds (402) and for a key without access (403), creating nothing", async () => {
    const emu = await emulator();
    emu.faults.refuseCreates("funds");
    const poor = await api(emu, "/pods", { method: "POST", body: JSON.stringify(vllmPod) });
    expect(poor.status).toBe(402);
    expect(((await poor.json()) as { detail: string }).detail).toMatch(/balance is too low/);
    emu.faults.refuseCreates("forbidden");
    expect((await api(emu, "/pods", { method: "POST", body: JSON.stringify(vllmPod) })).status).toBe(403);
    expect(emu.pods.list()).toEqual([]);
    expect((await api(emu, "/pods", { method: "POST", body: JSON.stringify(vllmPod) })).status).toBe(201);
  });
});

describe("pod proxy", () => {
  async function servingPod(emu: RunpodEmulator): Promise<string> {
    const { id } = await createPod(emu);
    emu.advance(T.provisionMs + T.imagePullMs + T.modelLoadMs);
    return id;
  }
  const chat = { model: "qwen", messages: [{ role: "user", content: "hello there" }], max_tokens: 3 };
  const post = (url: string, body: unknown, key = "sk-pod-key") =>
    fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  it("answers 502 while the model loads, then serves with the pod's vLLM key", async () => {
    const emu = await emulator();
    const { id } = await createPod(emu);
    const base = emu.proxyUrl(id, 8000);
    expect(base).toBe(`${emu.apiBaseUrl}/proxy/${id}-8000`);
    const early = await post(`${base}/v1/chat/completions`, chat);
    expect(early.status).toBe(502);
    expect(early.headers.get("content-type")).toMatch(/text\/html/);
    await early.body?.cancel();
    emu.advance(T.provisionMs + T.imagePullMs);
    expect(emu.pods.get(id)?.wire.status).toBe("RUNNING");
    expect((await post(`${base}/v1/chat/completions`, chat)).status).toBe(502);
    emu.advance(T.modelLoadMs);
    const models = await fetch(`${base}/v1/models`, { headers: { authorization: "Bearer sk-pod-key" } });
    expect(await models.json()).toMatchObject({ object: "list", data: [{ id: "qwen" }] });
    const ok = await post(`${base}/v1/chat/completions`, chat);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({
      object: "chat.completion",
      model: "qwen",
      usage: { completion_tokens: 3 },
    });
  });

  it("answers 401 for a wrong or missing vLLM key and leaves /health open", async () => {
    const emu = await emulator();
    const base = emu.proxyUrl(await servingPod(emu));
    const wrong = await post(`${base}/v1/chat/completions`, chat, "sk-wrong");
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ error: "Unauthorized" });
    const none = await fetch(`${base}/v1/models`);
    expect(none.status).toBe(401);
    await none.body?.cancel();
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(200);
    await health.body?.cancel();
  });

  it("streams SSE through the proxy, completions too", async () => {
    const emu = await emulator();
    const base = emu.proxyUrl(await servingPod(emu));
    const res = await post(`${base}/v1/chat/completions`, { ...chat, stream: true });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = sseData(await res.text());
    expect(events.at(-1)).toBe("[DONE]");
    expect(events.length).toBeGreaterThanOrEqual(4);
    const completion = await post(`${base}/v1/completions`, {
      model: "qwen",
      prompt: "once",
      max_tokens: 2,
      stream: true,
    });
    expect(sseData(await completion.text()).at(-1)).toBe("[DONE]");
  });

  it("routes by Host header {podId}-{port}.proxy.*, and 404s an unexposed port or unknown pod", async () => {
    const emu = await emulator();
    const id = await servingPod(emu);
    const viaHost = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: "127.0.0.1",
          port: emu.port,
          path: "/v1/models",
          headers: { host: `${id}-8000.proxy.runpod.net`, authorization: "Bearer sk-pod-key" },
        },
        (res) => {
          let body = "";
          res.on("data", (chunk: Buffer) => (body += chunk.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.once("error", reject);
      req.end();
    });
    expect(viaHost.status).toBe(200);
    expect(JSON.parse(viaHost.body)).toMatchObject({ data: [{ id: "qwen" }] });
    const unexposed = await fetch(`${emu.proxyUrl(id, 8888)}/v1/models`);
    expect(unexposed.status).toBe(404);
    await unexposed.body?.cancel();
    const unknown = await fetch(`${emu.proxyUrl("zzzzzzzzzzzzzz")}/v1/models`);
    expect(unknown.status).toBe(404);
    await unknown.body?.cancel();
  });

  it("answers 502 for a crash-looping pod and after a stop; cuts an open stream when the pod stops", async () => {
    const emu = await emulator({ tokenDelayMs: 20 });
    const id = await servingPod(emu);
    const base = emu.proxyUrl(id);
    const stream = await post(`${base}/v1/chat/completions`, { ...chat, max_tokens: 1000, stream: true });
    const reader = stream.body?.getReader();
    await reader?.read();
    emu.faults.crashLoop(id);
    await expect(
      (async () => {
        for (;;) if ((await reader?.read())?.done) return;
      })(),
    ).rejects.toThrow();
    expect((await post(`${base}/v1/chat/completions`, chat)).status).toBe(502);
    emu.advance(5 * (T.crashLoopUpMs + T.crashLoopDownMs));
    expect(emu.pods.get(id)?.crashRestarts).toBeGreaterThanOrEqual(5);
    expect((await post(`${base}/v1/chat/completions`, chat)).status).toBe(502);
    emu.faults.crashLoop(id, false);
    await api(emu, `/pods/${id}/action`, { method: "POST", body: '{"action":"stop"}' });
    expect((await post(`${base}/v1/chat/completions`, chat)).status).toBe(502);
  });
});
