// The Hugging Face emulator's control plane over HTTPS: routes, auth, required fields, the state
// machine on the virtual clock, update, delete and recreate, provider listing and catalog.
import { afterEach, describe, expect, it } from "vitest";
import { ENDPOINT_STATES, TRANSITIONS } from "../../src/index.js";
import { ALICE, BOB, READER, createBody, runningEndpoint, startHarness, type Harness } from "./hf-harness.js";

const open: Harness[] = [];
async function harness(...args: Parameters<typeof startHarness>): Promise<Harness> {
  const h = await startHarness(...args);
  open.push(h);
  return h;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

describe("auth and identity", () => {
  it("answers whoami-v2 for a token, 401 with HF's error body without one", async () => {
    const h = await harness();
    const me = await h.call("GET", `${h.emu.hubApiUrl}/api/whoami-v2`, { token: ALICE });
    expect(me.status).toBe(200);
    expect(me.json).toMatchObject({ type: "user", name: "alice", orgs: [{ type: "org", name: "acme" }] });
    const anon = await h.call("GET", `${h.emu.hubApiUrl}/api/whoami-v2`);
    expect(anon.status).toBe(401);
    expect(anon.json).toEqual({ error: "Invalid credentials in Authorization header" });
    expect(anon.headers["x-request-id"]).toMatch(/^emu-\d+$/);
    h.emu.tokens.add("hf_late_token_1", { namespace: "carol" });
    expect(
      (await h.call("GET", `${h.emu.hubApiUrl}/api/whoami-v2`, { token: "hf_late_token_1" })).json.name,
    ).toBe("carol");
  });

  it("refuses another namespace with 401, a read token's mutation with 403, and allows an org", async () => {
    const h = await harness();
    const api = `${h.emu.endpointsApiUrl}/v2/endpoint`;
    expect((await h.call("GET", `${api}/alice`, { token: BOB })).status).toBe(401);
    const read = await h.call("POST", `${api}/alice`, { token: READER, body: createBody("x1") });
    expect(read.status).toBe(403);
    expect((await h.call("GET", `${api}/alice`, { token: READER })).status).toBe(200);
    const org = await h.call("POST", `${api}/acme`, { token: ALICE, body: createBody("org-ep") });
    expect(org.status).toBe(200);
    expect(h.emu.endpoints.list("acme").map((e) => e.name)).toEqual(["org-ep"]);
  });
});

describe("endpoint objects and the state machine", () => {
  it("creates pending with every required field, then initializing and running on the virtual clock", async () => {
    const h = await harness();
    const api = `${h.emu.endpointsApiUrl}/v2/endpoint/alice`;
    const created = await h.call("POST", api, { token: ALICE, body: createBody("qwen-small") });
    expect(created.status).toBe(200);
    const ep = created.json;
    for (const key of ["name", "type", "accountId", "provider", "compute", "model", "healthRoute", "status"])
      expect(ep).toHaveProperty(key);
    expect(ep).toMatchObject({
      name: "qwen-small",
      type: "private",
      healthRoute: "/health",
      model: { repository: "Qwen/Qwen3-0.6B", task: "text-generation", secrets: { HF_TOKEN: "***" } },
      compute: { id: "aws-us-east-1-nvidia-l4-x1" },
      status: { state: "pending", url: null, message: "Endpoint waiting to be scheduled" },
    });
    expect(created.text).not.toContain("hf_secret_in_env");
    expect(ep.status?.createdAt).toMatch(/^2026-08-01T00:00:00\.(\d{3}|\d{6}|\d{9})Z$/);
    expect(ep.status).toHaveProperty("updatedAt");

    h.emu.advance(29_999);
    expect(h.emu.endpoints.get("alice", "qwen-small")?.state).toBe("pending");
    h.emu.advance(1);
    expect(h.emu.endpoints.get("alice", "qwen-small")?.state).toBe("initializing");
    h.emu.advance(120_000);
    const running = await h.call("GET", `${api}/qwen-small`, { token: ALICE });
    expect(running.json.status).toMatchObject({ state: "running", message: "Endpoint is ready" });
    expect(running.json.status?.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/endpoints\/[a-z0-9]{16}$/);
    const listed = await h.call("GET", api, { token: ALICE });
    expect(listed.json.items?.map((item) => item.name)).toEqual(["qwen-small"]);
  });

  it("pauses, refuses resume while running (400 'already running'), resumes, scales to zero", async () => {
    const h = await harness();
    const api = `${h.emu.endpointsApiUrl}/v2/endpoint/alice/ep`;
    await runningEndpoint(h, "ep");
    const again = await h.call("POST", `${api}/resume`, { token: ALICE });
    expect(again.status).toBe(400);
    expect(again.json.error).toContain("already running");
    const paused = await h.call("POST", `${api}/pause`, { token: ALICE });
    expect(paused.json.status).toMatchObject({ state: "paused", url: null });
    const resumed = await h.call("POST", `${api}/resume`, { token: ALICE });
    expect(resumed.json.status?.state).toBe("pending");
    h.emu.advance(150_000);
    expect(h.emu.endpoints.get("alice", "ep")?.state).toBe("running");
    const zero = await h.call("POST", `${api}/scale-to-zero`, { token: ALICE });
    expect(zero.json.status?.state).toBe("scaledToZero");
    expect(zero.json.status?.url).toMatch(/\/endpoints\//);
    await h.call("POST", `${api}/pause`, { token: ALICE });
    const refused = await h.call("POST", `${api}/scale-to-zero`, { token: ALICE });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toContain("paused");
  });

  it("rolls out a compute change as updating, and applies a scaling change without one", async () => {
    const h = await harness();
    const api = `${h.emu.endpointsApiUrl}/v2/endpoint/alice/ep`;
    await runningEndpoint(h, "ep");
    const scaled = await h.call("PUT", api, {
      token: ALICE,
      body: { compute: { scaling: { maxReplica: 2 } } },
    });
    expect(scaled.json.status?.state).toBe("running");
    expect(scaled.json.compute).toMatchObject({
      instanceType: "nvidia-l4",
      scaling: { maxReplica: 2, minReplica: 0 },
    });
    const bigger = await h.call("PUT", api, {
      token: ALICE,
      body: { compute: { instanceType: "nvidia-l40s" } },
    });
    expect(bigger.json.status?.state).toBe("updating");
    expect(bigger.json.compute?.id).toBe("aws-us-east-1-nvidia-l40s-x1");
    // What it runs on now, as clients read it for its GPU.
    expect(bigger.json.compute).toMatchObject({
      accelerator: "gpu",
      instanceType: "nvidia-l40s",
      instanceSize: "x1",
    });
    h.emu.advance(60_000);
    expect(h.emu.endpoints.get("alice", "ep")?.state).toBe("running");
    const bad = await h.call("PUT", api, {
      token: ALICE,
      body: { compute: { instanceType: "nvidia-x9000" } },
    });
    expect(bad.status).toBe(400);
  });

  it("deletes (404 afterwards); a recreated same-name endpoint is a new incarnation with a new URL", async () => {
    const h = await harness();
    const api = `${h.emu.endpointsApiUrl}/v2/endpoint/alice`;
    const first = await runningEndpoint(h, "ep");
    expect((await h.call("DELETE", `${api}/ep`, { token: ALICE })).status).toBe(200);
    const gone = await h.call("GET", `${api}/ep`, { token: ALICE });
    expect(gone.status).toBe(404);
    expect(gone.json.error).toContain("not found");
    expect((await h.call("GET", `${first.url}/v1/models`, { token: ALICE })).status).toBe(404);
    const second = await runningEndpoint(h, "ep");
    expect(second.createdAt).not.toBe(first.createdAt);
    // Another incarnation even at millisecond precision (the clock did not move between creates).
    expect(Date.parse(second.createdAt)).toBeGreaterThan(Date.parse(first.createdAt));
    expect(second.url).not.toBe(first.url);
  });

  it("writes one endpoint's times with varying precision between answers (seeded)", async () => {
    const h = await harness();
    await runningEndpoint(h, "ep");
    const spellings = new Set<string>();
    for (let i = 0; i < 12; i += 1) {
      const got = await h.call("GET", `${h.emu.endpointsApiUrl}/v2/endpoint/alice/ep`, { token: ALICE });
      spellings.add(got.json.status?.createdAt ?? "");
    }
    const digits = new Set([...spellings].map((s) => /\.(\d+)Z$/.exec(s)?.[1]?.length));
    expect(digits.size).toBeGreaterThan(1);
    // One instant at millisecond precision, whatever the spelling.
    expect(new Set([...spellings].map((s) => s.slice(0, 23))).size).toBe(1);
    expect(h.emu.endpoints.get("alice", "ep")?.createdAt).toBe(`${[...spellings][0]!.slice(0, 23)}Z`);
  });

  it("validates create bodies with messages naming the field, and refuses a duplicate with 409", async () => {
    const h = await harness();
    const api = `${h.emu.endpointsApiUrl}/v2/endpoint/alice`;
    const bad = await h.call("POST", api, { token: ALICE, body: createBody("Bad_Name") });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toContain("name");
    const nullTask = createBody("t1");
    (nullTask["model"] as Record<string, unknown>)["task"] = null;
    expect((await h.call("POST", api, { token: ALICE, body: nullTask })).json.error).toContain("model.task");
    const unknown = createBody("t2", {
      compute: {
        accelerator: "gpu",
        instanceType: "nvidia-zz",
        instanceSize: "x1",
        scaling: { minReplica: 0, maxReplica: 1 },
      },
    });
    expect((await h.call("POST", api, { token: ALICE, body: unknown })).status).toBe(400);
    expect((await h.call("POST", api, { token: ALICE, body: createBody("dup") })).status).toBe(200);
    const dup = await h.call("POST", api, { token: ALICE, body: createBody("dup") });
    expect(dup.status).toBe(409);
    expect((await h.call("POST", `${api}/dup/explode`, { token: ALICE })).status).toBe(404);
  });

  it("moves with real time under timeScale (end-to-end tests): pending → running without advance()", async () => {
    const h = await harness({ timeScale: 20_000 }); // 1 real ms = 20 virtual s
    await h.call("POST", `${h.emu.endpointsApiUrl}/v2/endpoint/alice`, {
      token: ALICE,
      body: createBody("fast"),
    });
    for (let i = 0; i < 100 && h.emu.endpoints.get("alice", "fast")?.state !== "running"; i++)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(h.emu.endpoints.get("alice", "fast")?.state).toBe("running");
    const createdAt = h.emu.endpoints.get("alice", "fast")?.createdAt ?? "";
    expect(h.emu.nowMs() - Date.parse(createdAt)).toBeGreaterThanOrEqual(150_000);
  });

  it("keeps the transition table closed over the documented states", () => {
    for (const from of ENDPOINT_STATES)
      for (const to of TRANSITIONS[from]) expect(ENDPOINT_STATES).toContain(to);
    expect(TRANSITIONS.paused).toEqual(["pending"]);
    expect(TRANSITIONS.running).not.toContain("pending");
  });
});

describe("provider listing and catalog", () => {
  it("lists vendors → regions → computes with price and the namespace's live quota", async () => {
    const h = await harness();
    await runningEndpoint(h, "ep");
    const listing = await h.call("GET", `${h.emu.endpointsApiUrl}/v2/provider/alice`, { token: ALICE });
    const vendors = listing.json["vendors"] as {
      name: string;
      regions: { name: string; computes: Record<string, unknown>[] }[];
    }[];
    const l4 = vendors[0]?.regions[0]?.computes.find((c) => c["id"] === "aws-us-east-1-nvidia-l4-x1");
    expect(l4).toMatchObject({
      pricePerHour: 0.8,
      quota: { maxAccelerators: 8, usedAccelerators: 1 },
      gpuMemoryGb: 24,
    });
    const anonymous = await h.call("GET", `${h.emu.endpointsApiUrl}/v2/provider`);
    expect(anonymous.status).toBe(200);
    expect(anonymous.text).not.toContain("quota");
  });

  it("refuses a create beyond quota with a message saying what to do", async () => {
    const h = await harness({
      hardware: [
        {
          vendor: "aws",
          region: "us-east-1",
          accelerator: "gpu",
          instanceType: "nvidia-l4",
          instanceSize: "x1",
          numAccelerators: 1,
          memoryGb: 30,
          gpuMemoryGb: 24,
          architecture: "Nvidia L4",
          status: "available",
          pricePerHour: 0.8,
          maxAccelerators: 1,
        },
      ],
    });
    await runningEndpoint(h, "one");
    const second = await h.call("POST", `${h.emu.endpointsApiUrl}/v2/endpoint/alice`, {
      token: ALICE,
      body: createBody("two"),
    });
    expect(second.status).toBe(400);
    expect(second.json.error).toMatch(/Quota exceeded .* Pause or delete/);
  });

  it("lists catalog models and deploys one as an authenticated endpoint, one replica always on", async () => {
    const h = await harness();
    const list = await h.call("GET", `${h.emu.catalogApiUrl}/repo-list`);
    expect(list.json["models"]).toContain("Qwen/Qwen3-0.6B");
    const deployed = await h.call("POST", `${h.emu.catalogApiUrl}/deploy`, {
      token: ALICE,
      body: { namespace: "alice", repoId: "Qwen/Qwen3-0.6B" },
    });
    expect(deployed.status).toBe(200);
    const endpoint = deployed.json["endpoint"] as Record<string, unknown>;
    expect(endpoint).toMatchObject({
      type: "authenticated",
      compute: { scaling: { minReplica: 1, maxReplica: 1 } },
    });
    expect(endpoint).toMatchObject({ compute: { scaling: { scaleToZeroTimeout: null } } });
    expect(endpoint["name"]).toMatch(/^qwen3-0-6b-[a-z0-9]{4}$/);
    const missing = await h.call("POST", `${h.emu.catalogApiUrl}/deploy`, {
      token: ALICE,
      body: { namespace: "alice", repoId: "nope/nope" },
    });
    expect(missing.status).toBe(404);
  });
});
