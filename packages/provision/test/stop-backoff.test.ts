// Stop retries back off: the wait after the n-th unconfirmed stop is stopRetryMs × 2^(n−1), capped at
// maxStopRetryMs, never shorter than a retry-after the provider gave. Pure arithmetic first, then the
// controller over FakeProvider on a virtual clock, reconciling every second.
import { describe, expect, it } from "vitest";
import {
  HostingController,
  ManualClock,
  MemoryHostingStore,
  nextStopAttemptAtMs,
  stopRetryDelayMs,
  validateStopBackoff,
  type ControllerOptions,
  type ProviderPort,
  type StopOutcome,
} from "@pair/provision";
import { CountingIds, FakeProvider } from "@pair/testkit";
import { AUTH, OWNER, POLICY, SPEC } from "./fixtures.js";

const B = { stopRetryMs: 5_000, maxStopRetryMs: 60_000 };

describe("stopRetryDelayMs", () => {
  it("doubles from stopRetryMs with each unconfirmed attempt and stops growing at the cap", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 50, 5_000].map((n) => stopRetryDelayMs(n, B))).toEqual([
      5_000, 10_000, 20_000, 40_000, 60_000, 60_000, 60_000, 60_000, 60_000,
    ]);
    expect(stopRetryDelayMs(0, B)).toBe(0);
    expect(stopRetryDelayMs(3, { stopRetryMs: 0, maxStopRetryMs: 0 })).toBe(0);
  });

  it("is due at once before any attempt, after the backoff, and never before the provider's retry-after", () => {
    expect(nextStopAttemptAtMs({ stopAttempts: 0 }, B)).toBe(Number.NEGATIVE_INFINITY);
    expect(nextStopAttemptAtMs({ stopAttempts: 3, lastStopAttemptAtMs: 1_000 }, B)).toBe(21_000);
    // A retry-after longer than the backoff wins; a shorter one changes nothing.
    const long = { stopAttempts: 1, lastStopAttemptAtMs: 1_000, stopNotBeforeMs: 91_000 };
    expect(nextStopAttemptAtMs(long, B)).toBe(91_000);
    expect(nextStopAttemptAtMs({ ...long, stopNotBeforeMs: 2_000 }, B)).toBe(6_000);
    // Attempts before `sinceMs` (a previous process's) set no backoff; a retry-after still holds.
    expect(nextStopAttemptAtMs({ stopAttempts: 3, lastStopAttemptAtMs: 1_000 }, B, 2_000)).toBe(
      Number.NEGATIVE_INFINITY,
    );
    expect(nextStopAttemptAtMs(long, B, 2_000)).toBe(91_000);
  });

  it("refuses a cap below the first wait", () => {
    expect(validateStopBackoff({ stopRetryMs: 10_000, maxStopRetryMs: 5_000 })).toEqual([
      "maxStopRetryMs: must be >= stopRetryMs",
    ]);
    expect(validateStopBackoff(B)).toEqual([]);
  });
});

/** FakeProvider whose stops answer what the test says, recording when each was sent. */
function world(overrides: Partial<ControllerOptions> = {}) {
  const clock = new ManualClock();
  const fake = new FakeProvider({ account: "acct", clock });
  const stopsAt: number[] = [];
  let answer: StopOutcome = { kind: "unknown", cause: "connection reset" };
  const provider: ProviderPort = {
    capabilities: fake.capabilities,
    create: (r) => fake.create(r),
    list: () => fake.list(),
    describe: (k) => fake.describe(k),
    stop: async (key, mode) => {
      stopsAt.push(clock.now().wallMs);
      return answer.kind === "accepted" ? fake.stop(key, mode) : answer;
    },
  };
  const store = new MemoryHostingStore();
  const options = (): ControllerOptions => ({
    controllerId: "c1",
    ownerTag: OWNER,
    account: "acct",
    provider,
    store,
    clock,
    ids: new CountingIds(),
    policy: POLICY,
    leaseTtlMs: 30_000,
    busyRequeueMs: 1_000,
    idleRequeueMs: 60_000,
    stopRetryMs: 5_000,
    ...overrides,
  });
  const t0 = clock.now().wallMs;
  const w = {
    clock,
    fake,
    c: HostingController.open(options()),
    /** Open the controller again on the same store, as a restarted sponsor does. */
    restart: () => (w.c = HostingController.open(options())),
    /** Seconds after the start at which stops were sent. */
    stopSeconds: () => stopsAt.map((at) => (at - t0) / 1000),
    answer: (next: StopOutcome) => (answer = next),
    /** Reconcile every second for `ms`. */
    async run(ms: number) {
      for (let t = 0; t < ms; t += 1_000) {
        clock.advance(1_000);
        await w.c.reconcileOnce();
      }
    },
  };
  return w;
}

async function running(w: ReturnType<typeof world>): Promise<string> {
  const id = w.c.declare(SPEC, AUTH);
  if (!id.ok) throw new Error(JSON.stringify(id.error));
  await w.c.start(id.value);
  return id.value;
}

describe("HostingController stop retries", () => {
  it("back off exponentially up to maxStopRetryMs while the stop stays unconfirmed, the obligation open", async () => {
    const w = world();
    const id = await running(w);
    await w.c.requireStop(id, "user-request"); // attempt 1 at 0 s
    await w.run(300_000);
    // Waits 5, 10, 20, 40, then 60 s (the cap) for ever: never more than a minute apart.
    expect(w.stopSeconds()).toEqual([0, 5, 15, 35, 75, 135, 195, 255]);
    expect(w.c.state.obligations[id]?.state).toBe("open");
    expect(w.c.state.deployments[id]?.stopAttempts).toBe(8);
    expect(w.fake.billing()).toHaveLength(1);

    w.answer({ kind: "accepted" });
    await w.run(60_000);
    expect(w.c.state.obligations[id]).toMatchObject({
      state: "discharged",
      evidence: { kind: "stop-accepted" },
    });
    expect(w.stopSeconds().at(-1)).toBe(315);
    expect(w.fake.billing()).toHaveLength(0);
  });

  it("honours a longer retry-after from the provider, and the backoff when it is shorter", async () => {
    const w = world({ maxStopRetryMs: 20_000 });
    const id = await running(w);
    w.answer({ kind: "refused", code: "rate_limited", message: "429", retryAfterMs: 45_000 });
    await w.c.requireStop(id, "idle"); // at 0 s: no new attempt for 45 s although the backoff says 5
    expect(w.c.state.deployments[id]?.stopNotBeforeMs).toBe(w.clock.now().wallMs + 45_000);
    w.answer({ kind: "unknown", cause: "503", retryAfterMs: 1_000 });
    await w.run(120_000);
    // 45 (retry-after), then the backoff (10, then 20 capped), a 1 s retry-after never shortening it.
    expect(w.stopSeconds()).toEqual([0, 45, 55, 75, 95, 115]);
    expect(w.c.state.obligations[id]?.state).toBe("open");
  });

  it("refuses a maxStopRetryMs below stopRetryMs at construction", () => {
    expect(() => world({ stopRetryMs: 30_000, maxStopRetryMs: 10_000 })).toThrow(/maxStopRetryMs/);
  });

  it("a restarted sponsor sends a required stop at once, not after the backoff its previous process reached", async () => {
    const w = world();
    const id = await running(w);
    await w.c.requireStop(id, "idle");
    await w.run(100_000); // attempts at 0, 5, 15, 35, 75 s: the next one was due at 135 s
    expect(w.stopSeconds()).toEqual([0, 5, 15, 35, 75]);
    w.restart();
    await w.run(2_000);
    expect(w.stopSeconds()).toEqual([0, 5, 15, 35, 75, 101]);
    expect(w.c.state.obligations[id]?.state).toBe("open");
    await w.run(60_000); // then the backoff the attempt count has reached (capped at 60 s)
    expect(w.stopSeconds()).toEqual([0, 5, 15, 35, 75, 101, 161]);
  });

  it("defaults the cap to 60 s, or to stopRetryMs when that is longer", async () => {
    const w = world({ stopRetryMs: 90_000 });
    const id = await running(w);
    await w.c.requireStop(id, "idle");
    await w.run(300_000);
    expect(w.stopSeconds()).toEqual([0, 90, 180, 270]);
  });
});
