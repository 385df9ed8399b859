// ClientGone: the client's going away as forwarding and the scheduler watch it (an AbortSignal's part).
import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { VirtualRuntime } from "@pair/cluster";
import { Scheduler } from "../../src/scheduler/scheduler.js";
import { ClientGone } from "../../src/server/forward.js";

describe("ClientGone", () => {
  it("calls each listener still registered once, in order, and no listener added after", () => {
    const gone = new ClientGone();
    const calls: string[] = [];
    const first = () => calls.push("first");
    const removed = () => calls.push("removed");
    gone.addEventListener("abort", first);
    gone.addEventListener("abort", removed);
    gone.addEventListener("abort", () => calls.push("last"));
    gone.removeEventListener("abort", removed);
    expect(gone.aborted).toBe(false);
    gone.abort();
    gone.abort();
    gone.addEventListener("abort", () => calls.push("late"));
    gone.abort();
    expect(gone.aborted).toBe(true);
    expect(calls).toEqual(["first", "last"]);
  });

  it("takes a request out of the scheduler's queue when the client goes away", async () => {
    const s = new Scheduler({
      maxQueued: 4,
      maxQueueWaitMs: 60_000,
      runtime: new VirtualRuntime(),
    });
    const target = { id: "e", maxConcurrent: 1 };
    const held = await s.acquire([target]);
    const gone = new ClientGone();
    const waiting = s.acquire([target], gone);
    expect(s.queued()).toBe(1);
    gone.abort();
    expect(await waiting).toEqual({ ok: false, reason: "aborted" });
    expect(s.queued()).toBe(0);
    // Already gone: not queued at all.
    expect(await s.acquire([target], gone)).toEqual({ ok: false, reason: "aborted" });
    if (held.ok) held.slot.release();
  });
  it("watches a response: aborts when it closes unfinished, not when it closes finished or unwatched", () => {
    const response = (finished: boolean, ended = finished) =>
      Object.assign(new EventEmitter(), {
        writableEnded: ended,
        writableFinished: finished,
      }) as unknown as ServerResponse;
    const cut = response(false);
    const goneOnCut = new ClientGone();
    goneOnCut.watch(cut);
    cut.emit("close");
    expect(goneOnCut.aborted).toBe(true);

    // A peer's HTTP/2 stream reset before end(): Node's compatibility response reports finished.
    const reset = response(true, false);
    const goneOnReset = new ClientGone();
    goneOnReset.watch(reset);
    reset.emit("close");
    expect(goneOnReset.aborted).toBe(true);

    const done = response(true);
    const goneOnDone = new ClientGone();
    goneOnDone.watch(done);
    done.emit("close");
    expect(goneOnDone.aborted).toBe(false);

    const later = response(false);
    const unwatched = new ClientGone();
    unwatched.watch(later);
    unwatched.unwatch();
    expect(later.listenerCount("close")).toBe(0);
    later.emit("close");
    expect(unwatched.aborted).toBe(false);
  });
});
