// The node's log while a request waits for a warming node: when the wait starts, every 30 s while it
// lasts, and how long it took when it ends; no timer left once it ended.
import { afterEach, describe, expect, it, vi } from "vitest";
import { clockAt, SYSTEM_TIMERS } from "@pair/cluster";
import { AttemptRun, COMPLETED } from "../../src/server/attempt-run.js";
import type { ExchangePlan } from "@pair/dialects";
import {
  WARMING_NOTE_MS,
  type ForwardDeps,
  type ForwardRequest,
  type Upstream,
} from "../../src/server/forward-deps.js";

afterEach(() => void vi.useRealTimers());

function run(log: string[]) {
  const deps = {
    // Date.now is vitest's fake time; the system timers are its fake timers.
    clock: clockAt(() => Date.now()),
    timers: SYSTEM_TIMERS,
    log: (line: string) => void log.push(line),
  } as unknown as ForwardDeps;
  const fr = {
    id: "req-1",
    workload: { warming: false },
    signal: new AbortController().signal,
  } as unknown as ForwardRequest;
  const upstream = {
    kind: "rented",
    label: "rented node gpu-hf",
    firstByteTimeoutMs: 600_000,
  } as unknown as Upstream;
  return new AttemptRun(deps, fr, upstream, {} as ExchangePlan);
}

describe("warming wait in the node's log", () => {
  it("says when it starts, again each 30 s, and how long it lasted", () => {
    vi.useFakeTimers({ now: 0 });
    const log: string[] = [];
    const a = run(log);
    a.warming();
    a.warming(); // asked again each second: still one wait
    vi.advanceTimersByTime(WARMING_NOTE_MS * 2 + 5_000);
    a.warmed("answered");
    vi.advanceTimersByTime(WARMING_NOTE_MS * 3);
    a.close(COMPLETED);
    expect(WARMING_NOTE_MS).toBe(30_000);
    expect(log).toEqual([
      "request req-1 waits for rented node gpu-hf to warm up",
      "request req-1 still waits for rented node gpu-hf to warm up (30 s)",
      "request req-1 still waits for rented node gpu-hf to warm up (60 s)",
      "request req-1: rented node gpu-hf answered after 65000 ms of warming",
    ]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a request that gives up while waiting stops the notes too", () => {
    vi.useFakeTimers({ now: 0 });
    const log: string[] = [];
    const a = run(log);
    a.warming();
    vi.advanceTimersByTime(WARMING_NOTE_MS + 1);
    a.close({ kind: "done", outcome: { kind: "cancelled" } });
    vi.advanceTimersByTime(WARMING_NOTE_MS * 2);
    expect(log).toHaveLength(3);
    expect(log[2]).toMatch(/^request req-1: rented node gpu-hf given up \(.+\) after 30001 ms of warming$/);
    expect(vi.getTimerCount()).toBe(0);
  });
});
