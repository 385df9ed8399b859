// The HTTPS transport against the Hugging Face emulator over real TLS: every route round trip and
// its domain mapping, typed errors, the retry policy in action (retry-after honoured, create never
// retried, lost answers), certificate verification, and token hygiene.
import { inspect } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import {
  HfToken,
  HfTransportOptionError,
  HttpsEndpointsTransport,
  HuggingFaceApiError,
  RetryAfterGate,
  type HfErrorKind,
} from "../src/index.js";
import { ALICE, READER, spec, startTransportHarness, type TransportHarness } from "./transport-harness.js";

const open: TransportHarness[] = [];
async function harness(): Promise<TransportHarness> {
  const h = await startTransportHarness();
  open.push(h);
  return h;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

async function failure(promise: Promise<unknown>): Promise<HuggingFaceApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof HuggingFaceApiError) return error;
    throw error;
  }
  throw new Error("expected a HuggingFaceApiError, the call succeeded");
}

async function expectKind(promise: Promise<unknown>, kind: HfErrorKind): Promise<HuggingFaceApiError> {
  const error = await failure(promise);
  expect(error.kind).toBe(kind);
  return error;
}

describe("round trips", () => {
  it("whoami, create, get, list, update, pause, resume, scale to zero, delete — in domain types", async () => {
    const h = await harness();
    const hf = h.transport();
    expect(await hf.whoami()).toEqual({ name: "alice", type: "user", orgs: [], tokenRole: "fineGrained" });

    const created = await hf.createEndpoint("alice", spec("qwen"));
    expect(created).toMatchObject({
      namespace: "alice",
      name: "qwen",
      state: "pending",
      url: undefined,
      accessType: "private",
      instanceType: "nvidia-l4",
      minReplica: 0,
      scaleToZeroTimeoutMin: 15,
      repository: "Qwen/Qwen3-0.6B",
    });
    // Canonical ms form, whatever precision this answer was written in.
    expect(created.incarnation).toBe("2026-08-01T00:00:00.000Z");
    expect(created.createdAtMs).toBe(Date.UTC(2026, 7, 1));

    h.emu.advance(150_000);
    const running = await hf.getEndpoint("alice", "qwen");
    expect(running).toMatchObject({ state: "running", incarnation: created.incarnation });
    expect(running.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/endpoints\/[a-z0-9]+$/);
    expect((await hf.listEndpoints("alice")).map((e) => e.name)).toEqual(["qwen"]);

    const updated = await hf.updateEndpoint("alice", "qwen", { instanceType: "nvidia-l40s", maxReplica: 2 });
    expect(updated).toMatchObject({
      state: "updating",
      instanceType: "nvidia-l40s",
      maxReplica: 2,
      minReplica: 0,
    });
    h.emu.advance(60_000);

    expect(await hf.resume("alice", "qwen")).toMatchObject({ state: "running" }); // "already running" is success
    expect(await hf.pause("alice", "qwen")).toMatchObject({ state: "paused", url: undefined });
    expect(await hf.resume("alice", "qwen")).toMatchObject({ state: "pending" });
    h.emu.advance(150_000);
    expect(await hf.scaleToZero("alice", "qwen")).toMatchObject({ state: "scaledToZero" });
    await hf.deleteEndpoint("alice", "qwen");
    expect(await hf.listEndpoints("alice")).toEqual([]);
    await expectKind(hf.getEndpoint("alice", "qwen"), "not_found");
  });

  it("lists hardware with price, quota and deployability, the catalog, and deploys from it", async () => {
    const h = await harness();
    const hf = h.transport();
    const offers = await hf.listProviderCompute("alice");
    expect(offers.find((o) => o.id === "aws-us-east-1-nvidia-l4-x1")).toMatchObject({
      pricePerHourUsd: 0.8,
      gpuMemoryGb: 24,
      quota: { maxAccelerators: 8, usedAccelerators: 0 },
      deployable: true,
    });
    expect(offers.find((o) => o.id === "aws-us-east-1-nvidia-h200-x8")?.deployable).toBe(false);
    expect(offers.find((o) => o.accelerator === "cpu")?.gpuMemoryGb).toBeUndefined();
    expect(await hf.catalog()).toContain("Qwen/Qwen3-0.6B");
    const deployed = await hf.deployFromCatalog({
      namespace: "alice",
      repoId: "Qwen/Qwen3-0.6B",
      endpointName: "cat",
    });
    expect(deployed).toMatchObject({ name: "cat", accessType: "authenticated", state: "pending" });
  });

  it("never creates a public endpoint", async () => {
    const h = await harness();
    expect(() =>
      h.transport().createEndpoint("alice", spec("pub", { accessType: "public" as "private" })),
    ).toThrow(/only private or authenticated/);
    expect(h.emu.endpoints.list()).toEqual([]);
  });
});

describe("typed errors", () => {
  it("maps HF's statuses to kinds with HF's message and the request id", async () => {
    const h = await harness();
    const bad = h.transport({ token: new HfToken("hf_not_a_known_token") });
    const rejected = await expectKind(bad.whoami(), "rejected_credential");
    expect(rejected.status).toBe(401);
    expect(rejected.providerMessage).toBe("Invalid credentials in Authorization header");
    expect(rejected.requestId).toMatch(/^emu-/);
    expect(rejected.retryable).toBe(false);

    const reader = h.transport({ token: new HfToken(READER) });
    await expectKind(reader.createEndpoint("alice", spec("x1")), "forbidden");
    const hf = h.transport();
    await hf.createEndpoint("alice", spec("dup"));
    const conflict = await expectKind(hf.createEndpoint("alice", spec("dup")), "conflict");
    expect(conflict.message).toContain("already exists");
    const invalid = await expectKind(hf.createEndpoint("alice", spec("Bad_Name")), "invalid_request");
    expect(invalid.providerMessage).toContain("name");
    await expectKind(hf.pause("alice", "nope"), "not_found");
  });

  it("refuses http:// to a non-loopback host (insecure_url) and allows it on loopback", async () => {
    const make = (hubApi: string) => new HttpsEndpointsTransport({ token: new HfToken(ALICE), hubApi });
    expect(() => make("http://api.example.com")).toThrow(HfTransportOptionError);
    expect(() => make("http://10.0.0.5:8080")).toThrow(/insecure|http is allowed for loopback only/);
    let code: string | undefined;
    try {
      make("http://10.0.0.5:8080");
    } catch (error) {
      code = (error as HfTransportOptionError).code;
    }
    expect(code).toBe("insecure_url");
    await make("http://127.0.0.1:9").close();
  });

  it("fails with kind certificate when the client does not trust the server's CA", async () => {
    const h = await harness();
    const { createTestCa } = await import("@pair/testkit");
    const stranger = h.transport({ extraCaPem: (await createTestCa("another CA")).certPem });
    const error = await expectKind(stranger.whoami(), "certificate");
    expect(h.sleeps).toEqual([]);
    expect(error.message).toContain("verification cannot be turned off");
    const noExtra = h.transport({ extraCaPem: undefined as unknown as string });
    await expectKind(noExtra.listEndpoints("alice"), "certificate");
  });
});

describe("retry policy in action", () => {
  it("honours retry-after on 429 for an idempotent call", async () => {
    const h = await harness();
    h.emu.faults.rateLimitNext(2, 7, { path: "/api/whoami-v2" });
    expect((await h.transport().whoami()).name).toBe("alice");
    expect(h.sleeps).toEqual([7000, 7000]);
  });

  it("a shared retry-after gate holds every client of the account: the others send nothing inside it", async () => {
    const h = await harness();
    const gate = new RetryAfterGate();
    const probe = h.transport({ gate, retry: { maxAttempts: 1 } });
    const managed = h.transport({ gate });
    h.emu.faults.rateLimitNext(1, 30, { method: "GET" });
    await expectKind(probe.listEndpoints("alice"), "rate_limited");
    const seen = h.emu.controlRequests().length;
    const held = await expectKind(managed.listEndpoints("alice"), "rate_limited");
    expect(held.retryAfterMs).toBeGreaterThan(25_000);
    expect(h.emu.controlRequests()).toHaveLength(seen);
    expect(gate.closedForMs(Date.now() + 31_000)).toBe(0);
  });

  it("retries 503 and 500 with bounded backoff, then gives up with kind server", async () => {
    const h = await harness();
    h.emu.faults.failNext(2, 503, { method: "GET" });
    expect(await h.transport().listEndpoints("alice")).toEqual([]);
    expect(h.sleeps).toEqual([188, 375]); // base 250 × 2^(n-1) × (0.5 + 0.5/2), no retry-after sent
    h.sleeps.length = 0;
    h.emu.faults.failNext(10, 500, { method: "GET" });
    const error = await expectKind(h.transport().listEndpoints("alice"), "server");
    expect(h.sleeps).toHaveLength(3); // 4 attempts in all
    expect(error.retryable).toBe(true);
  });

  it("does not wait for a retry-after longer than the bound: rate_limited with retryAfterMs", async () => {
    const h = await harness();
    h.emu.faults.rateLimitNext(1, 600);
    const error = await expectKind(
      h.transport({ retry: { maxRetryAfterMs: 60_000 } }).whoami(),
      "rate_limited",
    );
    expect(error.retryAfterMs).toBe(600_000);
    expect(h.sleeps).toEqual([]);
  });

  it("never retries a create: 429 is reported, a lost answer is uncertain and resolved by listing", async () => {
    const h = await harness();
    const hf = h.transport();
    h.emu.faults.rateLimitNext(1, 1, { method: "POST" });
    await expectKind(hf.createEndpoint("alice", spec("ep")), "rate_limited");
    expect(h.emu.endpoints.list()).toEqual([]);
    // Inside the retry-after window nothing more is sent, a create neither.
    const seen = h.emu.controlRequests().length;
    const held = await expectKind(hf.createEndpoint("alice", spec("ep")), "rate_limited");
    expect(held.message).toContain("not sent");
    expect(h.emu.controlRequests()).toHaveLength(seen);

    const other = h.transport(); // its own retry-after window
    h.emu.faults.loseAnswers(1, { method: "POST" });
    const lost = await expectKind(other.createEndpoint("alice", spec("ep")), "uncertain");
    expect(lost.message).toContain("list the endpoints");
    expect(h.sleeps).toEqual([]);
    const listed = await other.listEndpoints("alice");
    expect(listed.map((e) => e.name)).toEqual(["ep"]);
    expect(h.emu.endpoints.list()).toHaveLength(1);

    h.emu.faults.failNext(1, 500, { method: "POST" });
    await expectKind(other.createEndpoint("alice", spec("ep2")), "uncertain");
    expect(h.sleeps).toEqual([]);
  });

  it("retries a pause whose answer was lost; a delete whose answer was lost finds it gone", async () => {
    const h = await harness();
    const hf = h.transport();
    await hf.createEndpoint("alice", spec("ep"));
    h.emu.advance(150_000);
    h.emu.faults.loseAnswers(1, { path: "/pause" });
    expect(await hf.pause("alice", "ep")).toMatchObject({ state: "paused" });
    expect(h.sleeps).toHaveLength(1);
    h.emu.faults.loseAnswers(1, { method: "DELETE" });
    await hf.deleteEndpoint("alice", "ep");
    expect(h.emu.endpoints.list()).toEqual([]);
    await expectKind(hf.deleteEndpoint("alice", "ep"), "not_found"); // without a loss, absent is an error
  });
});

describe("token hygiene", () => {
  it("masks the token in toString, JSON and inspect, and keeps it out of errors", async () => {
    const token = new HfToken(ALICE);
    expect(String(token)).not.toContain(ALICE);
    expect(JSON.stringify({ token })).not.toContain(ALICE);
    expect(inspect({ token })).not.toContain(ALICE);
    expect(token.reveal()).toBe(ALICE);
    const h = await harness();
    h.emu.faults.failNext(1, 500, { method: "POST" });
    const error = await failure(h.transport().createEndpoint("alice", spec("ep")));
    expect(`${error.message} ${inspect(error)} ${JSON.stringify(error)}`).not.toContain(ALICE);
    expect(inspect(h.transport())).not.toContain(ALICE);
  });
});
