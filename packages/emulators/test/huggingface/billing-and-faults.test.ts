// The billing meter (started minutes while initializing/running × pricePerHour, virtual time) and
// the control plane's fault switches: lost answers, 5xx, 429 with retry-after, slow state changes,
// failed deploys with a message, a partial listing; the log of control requests received.
import { afterEach, describe, expect, it } from "vitest";
import { ALICE, MINUTE, createBody, runningEndpoint, startHarness, type Harness } from "./hf-harness.js";

const open: Harness[] = [];
async function harness(...args: Parameters<typeof startHarness>): Promise<Harness> {
  const h = await startHarness(...args);
  open.push(h);
  return h;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

const L4_PER_MINUTE_MICRO = 800_000 / 60;

describe("billing meter", () => {
  it("bills from initializing on, per started minute, and stops at pause", async () => {
    const h = await harness();
    const api = `${h.emu.endpointsApiUrl}/v2/endpoint/alice/ep`;
    await h.call("POST", `${h.emu.endpointsApiUrl}/v2/endpoint/alice`, {
      token: ALICE,
      body: createBody("ep"),
    });
    h.emu.advance(30_000); // pending: not billed
    expect(h.emu.meter.billedMinutes("alice", "ep")).toBe(0);
    h.emu.advance(1); // 1 ms of initializing: one started minute
    expect(h.emu.meter.billedMinutes("alice", "ep")).toBe(1);
    h.emu.advance(120_000 - 1 + 7 * MINUTE + 30_000); // initializing 2 min, running 7.5 min
    await h.call("POST", `${api}/pause`, { token: ALICE });
    expect(h.emu.meter.billedMinutes("alice", "ep")).toBe(10); // 9.5 minutes → 10 started
    h.emu.advance(60 * MINUTE);
    expect(h.emu.meter.billedMinutes("alice", "ep")).toBe(10);
    expect(h.emu.meter.totalMicroUsd("alice", "ep")).toBe(Math.round(10 * L4_PER_MINUTE_MICRO));
    expect(h.emu.meter.stretches()).toHaveLength(1);
  });

  it("does not bill while scaled to zero; a wake opens a new stretch; the price follows an update", async () => {
    const h = await harness();
    const { url } = await runningEndpoint(h, "ep"); // 2 min initializing
    h.emu.advance(15 * MINUTE); // idle timeout: scaled to zero after 15 running minutes
    expect(h.emu.endpoints.get("alice", "ep")?.state).toBe("scaledToZero");
    expect(h.emu.meter.billedMinutes("alice", "ep")).toBe(17);
    h.emu.advance(60 * MINUTE);
    expect(h.emu.meter.billedMinutes("alice", "ep")).toBe(17);
    await h.call("GET", `${url}/v1/models`, { token: ALICE }); // wakes it
    h.emu.advance(60_000);
    await h.call("PUT", `${h.emu.endpointsApiUrl}/v2/endpoint/alice/ep`, {
      token: ALICE,
      body: { compute: { instanceType: "nvidia-l40s" } },
    });
    h.emu.advance(2 * MINUTE);
    await h.call("DELETE", `${h.emu.endpointsApiUrl}/v2/endpoint/alice/ep`, { token: ALICE });
    expect(h.emu.meter.billedMinutes("alice", "ep")).toBe(17 + 1 + 2);
    const expected = (18 * 800_000 + 2 * 1_800_000) / 60;
    expect(h.emu.meter.totalMicroUsd("alice", "ep")).toBe(Math.round(expected));
    expect(h.emu.meter.totalMicroUsd("alice")).toBe(Math.round(expected));
  });
});

describe("fault switches", () => {
  it("loses an answer after carrying out the action", async () => {
    const h = await harness();
    h.emu.faults.loseAnswers(1, { method: "POST", path: "/v2/endpoint/alice" });
    await expect(
      h.call("POST", `${h.emu.endpointsApiUrl}/v2/endpoint/alice`, {
        token: ALICE,
        body: createBody("lost"),
      }),
    ).rejects.toThrow();
    expect(h.emu.endpoints.get("alice", "lost")?.state).toBe("pending");
    expect(
      (await h.call("GET", `${h.emu.endpointsApiUrl}/v2/endpoint/alice/lost`, { token: ALICE })).status,
    ).toBe(200);
  });

  it("holds a request: applied before the answer, or only if released with apply, even after the client left", async () => {
    const h = await harness();
    const api = `${h.emu.endpointsApiUrl}/v2/endpoint/alice`;
    // Applied at once, answer held: the endpoint exists while the client still waits.
    h.emu.faults.holdNext(1, { method: "POST" }, "before-answer");
    const first = h.call("POST", api, { token: ALICE, body: createBody("early") });
    await h.emu.faults.whenHeld();
    expect(h.emu.endpoints.get("alice", "early")?.state).toBe("pending");
    expect(h.emu.faults.releaseHeld()).toBe(1);
    expect((await first).status).toBe(200);
    // Held before applying, then dropped: nothing exists and the client's connection is cut.
    h.emu.faults.holdNext(1, { method: "POST" });
    const dropped = h.call("POST", api, { token: ALICE, body: createBody("never") });
    await h.emu.faults.whenHeld();
    expect(h.emu.endpoints.get("alice", "never")).toBeUndefined();
    expect(h.emu.faults.releaseHeld("drop")).toBe(1);
    await expect(dropped).rejects.toThrow();
    expect(h.emu.endpoints.get("alice", "never")).toBeUndefined();
    // Held before applying, released with apply: carried out then answered.
    h.emu.faults.holdNext(1, { method: "POST" });
    const late = h.call("POST", api, { token: ALICE, body: createBody("late") });
    await h.emu.faults.whenHeld();
    expect(h.emu.endpoints.get("alice", "late")).toBeUndefined();
    h.emu.faults.releaseHeld("apply");
    expect((await late).status).toBe(200);
    expect(h.emu.endpoints.get("alice", "late")?.state).toBe("pending");
    expect(h.emu.faults.heldCount).toBe(0);
    expect(h.emu.faults.arrived({ method: "POST", path: /^\/v2\/endpoint\/alice$/ })).toBe(3);
  });

  it("fails the next N requests with 5xx without changing anything", async () => {
    const h = await harness();
    h.emu.faults.failNext(2, 503);
    const api = `${h.emu.endpointsApiUrl}/v2/endpoint/alice`;
    expect((await h.call("POST", api, { token: ALICE, body: createBody("x1") })).status).toBe(503);
    expect((await h.call("GET", api, { token: ALICE })).status).toBe(503);
    expect(h.emu.endpoints.list("alice")).toEqual([]);
    expect((await h.call("GET", api, { token: ALICE })).status).toBe(200);
  });

  it("answers 429 with retry-after and HF's RateLimit headers", async () => {
    const h = await harness();
    h.emu.faults.rateLimitNext(1, 7, { path: "/api/whoami-v2" });
    const limited = await h.call("GET", `${h.emu.hubApiUrl}/api/whoami-v2`, { token: ALICE });
    expect(limited.status).toBe(429);
    expect(limited.headers["retry-after"]).toBe("7");
    expect(limited.headers["ratelimit"]).toBe('"api";r=0;t=7');
    expect(limited.json.error).toContain("rate limit");
    expect((await h.call("GET", `${h.emu.hubApiUrl}/api/whoami-v2`, { token: ALICE })).status).toBe(200);
  });

  it("slows state changes: pause is accepted but the endpoint runs (and bills) until it lands", async () => {
    const h = await harness();
    await runningEndpoint(h, "ep");
    h.emu.faults.slowStateChanges(90_000);
    const answer = await h.call("POST", `${h.emu.endpointsApiUrl}/v2/endpoint/alice/ep/pause`, {
      token: ALICE,
    });
    expect(answer.json.status?.state).toBe("running");
    h.emu.advance(89_999);
    expect(h.emu.endpoints.get("alice", "ep")?.state).toBe("running");
    h.emu.advance(1);
    expect(h.emu.endpoints.get("alice", "ep")?.state).toBe("paused");
    expect(h.emu.meter.billedMinutes("alice", "ep")).toBe(2 + 2); // 2 initializing + 1.5 running
  });

  it("hides an endpoint from the next N listings while its own GET still answers; logs every request", async () => {
    const h = await harness();
    await runningEndpoint(h, "ep");
    await runningEndpoint(h, "other");
    h.emu.faults.hideFromListing("ep", 2);
    const api = `${h.emu.endpointsApiUrl}/v2/endpoint/alice`;
    const names = async () =>
      ((await h.call("GET", api, { token: ALICE })).json.items as { name: string }[]).map((e) => e.name);
    expect(await names()).toEqual(["other"]);
    expect((await h.call("GET", `${api}/ep`, { token: ALICE })).status).toBe(200);
    expect(await names()).toEqual(["other"]);
    expect((await names()).sort()).toEqual(["ep", "other"]);
    expect(() => h.emu.faults.hideFromListing("ep", 0)).toThrow(RangeError);

    h.emu.faults.rateLimitNext(1, 3, { method: "GET" });
    await h.call("GET", `${api}/ep`, { token: ALICE });
    const seen = h.emu.controlRequests();
    expect(seen.filter((r) => r.method === "GET" && r.path === "/v2/endpoint/alice")).toHaveLength(3);
    expect(seen.at(-1)).toMatchObject({ method: "GET", path: "/v2/endpoint/alice/ep", fault: "rate-limit" });
    expect(seen.at(-1)?.atMs).toBe(h.emu.nowMs());
  });

  it("fails a deploy with the given message; a failed endpoint cannot be resumed", async () => {
    const h = await harness();
    h.emu.faults.failNextDeploy("Endpoint failed to start: out of memory loading weights");
    await h.call("POST", `${h.emu.endpointsApiUrl}/v2/endpoint/alice`, {
      token: ALICE,
      body: createBody("ep"),
    });
    h.emu.advance(150_000);
    const failed = await h.call("GET", `${h.emu.endpointsApiUrl}/v2/endpoint/alice/ep`, { token: ALICE });
    expect(failed.json.status).toMatchObject({
      state: "failed",
      message: "Endpoint failed to start: out of memory loading weights",
      url: null,
    });
    const resume = await h.call("POST", `${h.emu.endpointsApiUrl}/v2/endpoint/alice/ep/resume`, {
      token: ALICE,
    });
    expect(resume.status).toBe(400);
    expect(resume.json.error).toContain("cannot be resumed");
    h.emu.faults.clear();
    expect(h.emu.faults.takeDeployFailure()).toBeUndefined();
  });
});
