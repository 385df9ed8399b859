import { describe, expect, it } from "vitest";
import { VirtualRuntime } from "@pair/cluster";
import { INTERACTIVE_PEAK_HOLD_MS, Scheduler } from "../../src/scheduler/scheduler.js";

const a = { id: "a", maxConcurrent: 2 };
const b = { id: "b", maxConcurrent: 1 };

describe("Scheduler", () => {
  it("picks the least loaded candidate with a free slot", async () => {
    const s = new Scheduler({ maxQueued: 4, maxQueueWaitMs: 1000, runtime: new VirtualRuntime() });
    const first = await s.acquire([a, b]);
    const second = await s.acquire([a, b]);
    const third = await s.acquire([a, b]);
    expect([first, second, third].map((r) => (r.ok ? r.slot.target.id : r.reason))).toEqual(["a", "b", "a"]);
    expect(s.inFlight("a")).toBe(2);
  });

  it("queues in FIFO order and hands a freed slot to the first waiter", async () => {
    const t = new VirtualRuntime();
    const s = new Scheduler({ maxQueued: 4, maxQueueWaitMs: 1000, runtime: t });
    const held = await s.acquire([b]);
    const order: string[] = [];
    const w1 = s.acquire([b]).then((r) => (order.push("w1"), r));
    const w2 = s.acquire([b]).then((r) => (order.push("w2"), r));
    expect(s.queued()).toBe(2);
    if (held.ok) held.slot.release();
    const r1 = await w1;
    if (r1.ok) r1.slot.release();
    await w2;
    expect(order).toEqual(["w1", "w2"]);
  });

  it("refuses when the queue is full, times out a long wait, and honours an abort", async () => {
    const t = new VirtualRuntime();
    const s = new Scheduler({ maxQueued: 1, maxQueueWaitMs: 500, runtime: t });
    await s.acquire([b]);
    const waiting = s.acquire([b]);
    expect(await s.acquire([b])).toEqual({ ok: false, reason: "queue-full" });
    t.advance(500);
    expect(await waiting).toEqual({ ok: false, reason: "queue-timeout" });
    const abort = new AbortController();
    const aborted = s.acquire([b], abort.signal);
    abort.abort();
    expect(await aborted).toEqual({ ok: false, reason: "aborted" });
    expect(s.queued()).toBe(0);
  });

  it("release is idempotent and never drives a count below zero", async () => {
    const s = new Scheduler({ maxQueued: 0, maxQueueWaitMs: 0, runtime: new VirtualRuntime() });
    const r = await s.acquire([a]);
    if (!r.ok) throw new Error("no slot");
    r.slot.release();
    r.slot.release();
    expect(s.inFlight("a")).toBe(0);
  });

  it("refuses nonsense limits", () => {
    expect(() => new Scheduler({ maxQueued: -1, maxQueueWaitMs: 0, runtime: new VirtualRuntime() })).toThrow(
      /maxQueued/,
    );
    const s = new Scheduler({ maxQueued: 0, maxQueueWaitMs: 0, runtime: new VirtualRuntime() });
    expect(() => s.acquire([{ id: "x", maxConcurrent: 0 }])).toThrow(/maxConcurrent/);
  });

  it("batch work leaves a target's last slot to users and waits behind them", async () => {
    const t = new VirtualRuntime();
    const s = new Scheduler({ maxQueued: 1, maxQueueWaitMs: 60_000, runtime: t });
    const three = { id: "three", maxConcurrent: 3 };
    const batch1 = await s.acquire([three], undefined, "batch");
    const batch2 = await s.acquire([three], undefined, "batch");
    expect(batch1.ok && batch2.ok).toBe(true);
    // The third slot is a user's: a batch line waits for it, a chat does not.
    const batch3 = s.acquire([three], undefined, "batch");
    const chat = await s.acquire([three]);
    expect(chat.ok).toBe(true);
    // Batch waiters never fill the users' queue: one user may still wait (maxQueued 1).
    const order: string[] = [];
    const waitingChat = s.acquire([three]).then((r) => (order.push("chat"), r));
    void batch3.then(() => order.push("batch"));
    expect(s.queued()).toBe(2);
    // A freed slot goes to the user who queued after the batch line.
    if (batch1.ok) batch1.slot.release();
    const served = await waitingChat;
    expect(served.ok).toBe(true);
    expect(order).toEqual(["chat"]);
    if (served.ok) served.slot.release();
    // batch2 and the first chat hold two of three: still no slot for batch work …
    await Promise.resolve();
    expect(order).toEqual(["chat"]);
    // … nor once the chat ends: two users held the target at once, and their slots stay theirs …
    if (chat.ok) chat.slot.release();
    await Promise.resolve();
    expect(order).toEqual(["chat"]);
    // … until INTERACTIVE_PEAK_HOLD_MS has passed without them (within the batch line's queue wait).
    t.advance(INTERACTIVE_PEAK_HOLD_MS - 1);
    await Promise.resolve();
    expect(order).toEqual(["chat"]);
    t.advance(1);
    expect((await batch3).ok).toBe(true);
    expect(order).toEqual(["chat", "batch"]);
    // A target of one slot: batch work may use it (else a batch could never run there).
    expect((await s.acquire([b], undefined, "batch")).ok).toBe(true);
  });

  it("keeps free for batch work's sake only what users held at once lately, then gives it back", async () => {
    const t = new VirtualRuntime();
    const s = new Scheduler({ maxQueued: 8, maxQueueWaitMs: 60_000, runtime: t });
    const eight = { id: "eight", maxConcurrent: 8 };
    const take = (n: number, priority: "interactive" | "batch") => {
      const slots = [];
      for (let i = 0; i < n; i++) {
        const r = s.tryAcquire([eight], priority);
        if (r === undefined) break;
        slots.push(r);
      }
      return slots;
    };
    // Three chats at once, then done: the batch may fill 8 − 1 − 3 = 4 slots, not 7.
    for (const slot of take(3, "interactive")) slot.release();
    const batch = take(8, "batch");
    expect(batch).toHaveLength(4);
    // The next three chats find their slots free (and the last one is still kept).
    const chats = take(3, "interactive");
    expect(chats).toHaveLength(3);
    expect(s.tryAcquire([eight], "batch")).toBeUndefined();
    // While users hold their slots the batch may not take theirs either; once they are gone and the
    // peak is older than the hold, a waiting batch line is woken without any slot being released.
    for (const slot of chats) slot.release();
    const waiting = s.acquire([eight], undefined, "batch");
    t.advance(INTERACTIVE_PEAK_HOLD_MS);
    const woken = await waiting;
    expect(woken.ok).toBe(true);
    expect(s.inFlight("eight")).toBe(5);
    expect(take(8, "batch")).toHaveLength(2);
  });
});
