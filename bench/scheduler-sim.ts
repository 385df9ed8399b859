/**
 * The scheduler alone, in virtual time: one target of `--slots` slots, a batch that keeps
 * `--batch-lines` lines in flight (each `--line-ms` long, with ±`--jitter` of it), and `--streams`
 * closed-loop users (each stream `--line-ms` long, `--think-ms` between them). Reports how long users
 * waited for a slot (p50/p99/max) and the share of slot-time in use — what the machine cannot blur:
 * no sockets, no CPU, only the slot rules (packages/node/src/scheduler/scheduler.ts).
 * `--handover-ms G`: each request holds its slot G ms longer than the engine works on it (the
 * request's way to the engine and its reply's way back, while the node counts the slot as taken),
 * so "engine busy" is what an engine's own counters would show.
 *
 *   npx tsx bench/scheduler-sim.ts [--slots 32] [--streams 4] [--batch-lines 32] [--line-ms 320]
 *                                  [--jitter 0] [--think-ms 1] [--handover-ms 0] [--seconds 120]
 * Must not know: HTTP, the node.
 */

import { parseArgs } from "node:util";
import { VirtualRuntime } from "@pair/cluster";
import { Scheduler, type Slot } from "../packages/node/src/scheduler/scheduler.js";
import { percentile } from "./stats.js";

const { values } = parseArgs({
  options: {
    slots: { type: "string", default: "32" },
    streams: { type: "string", default: "4" },
    "batch-lines": { type: "string", default: "32" },
    "line-ms": { type: "string", default: "320" },
    jitter: { type: "string", default: "0" },
    "think-ms": { type: "string", default: "1" },
    "handover-ms": { type: "string", default: "0" },
    seconds: { type: "string", default: "120" },
  },
  strict: true,
});
const slots = Number(values.slots);
const streams = Number(values.streams);
const batchLines = Number(values["batch-lines"]);
const lineMs = Number(values["line-ms"]);
const jitter = Number(values.jitter);
const thinkMs = Number(values["think-ms"]);
const handoverMs = Number(values["handover-ms"]);
const endMs = Number(values.seconds) * 1000;

// A discrete-event clock: timers ordered by due time, run one at a time.
const runtime = new VirtualRuntime({ monoMs: 0 });
const setTimer = runtime.timers.after;
// A seeded generator, so a run can be repeated.
let state = 12345;
const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const length = () => lineMs * (1 + jitter * (2 * random() - 1));

const s = new Scheduler({ maxQueued: 1024, maxQueueWaitMs: 3_600_000, runtime });
const target = { id: "engine", maxConcurrent: slots };
const waits: number[] = [];
let busySlotMs = 0;
let engineBusyMs = 0;
let lastMs = 0;
let held = 0;
let working = 0;
const account = () => {
  busySlotMs += held * (runtime.monoMs - lastMs);
  engineBusyMs += working * (runtime.monoMs - lastMs);
  lastMs = runtime.monoMs;
};
// The slot is taken for the request's way to the engine, its work, and its reply's way back.
const hold = (slot: Slot, ms: number, then: () => void) => {
  account();
  held++;
  setTimer(() => {
    account();
    working++;
    setTimer(() => {
      account();
      working--;
      setTimer(() => {
        account();
        held--;
        slot.release();
        then();
      }, handoverMs / 2);
    }, ms);
  }, handoverMs / 2);
};

const user = () => {
  const asked = runtime.monoMs;
  void s.acquire([target]).then((r) => {
    if (!r.ok) throw new Error(`a user's request failed: ${r.reason}`);
    if (runtime.monoMs >= 5_000) waits.push(runtime.monoMs - asked);
    hold(r.slot, length(), () => setTimer(user, thinkMs));
  });
};
const batchLine = () => {
  if (runtime.monoMs >= endMs) return;
  void s.acquire([target], undefined, "batch").then((r) => {
    if (!r.ok) throw new Error(`a batch line failed: ${r.reason}`);
    hold(r.slot, length(), batchLine);
  });
};

// The batch starts first (it fills the engine), the users a little later, as in bench/batch-load.ts.
for (let i = 0; i < batchLines; i++) batchLine();
for (let i = 0; i < streams; i++) setTimer(user, 1_000 + (i * lineMs) / streams);

while (runtime.monoMs < endMs) {
  await Promise.resolve();
  await Promise.resolve();
  if (!runtime.runNext()) break;
}
account();
const f = (v: number) => v.toFixed(1);
console.log(
  `slots ${slots}, users ${streams}, batch lines ${batchLines}, line ${lineMs} ms ±${jitter * 100}%: ` +
    `user wait p50 ${f(percentile(waits, 50))} ms, p99 ${f(percentile(waits, 99))} ms, max ${f(Math.max(...waits))} ms ` +
    `(${waits.length} requests); slots busy ${((busySlotMs / (slots * runtime.monoMs)) * 100).toFixed(1)} %` +
    (handoverMs > 0 ? `, engine busy ${((engineBusyMs / (slots * runtime.monoMs)) * 100).toFixed(1)} %` : ""),
);
