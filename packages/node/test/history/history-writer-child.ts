/**
 * Child process for history-shutdown.test.ts: opens a workload history on the file given (its rows
 * written on a worker thread with `thread`, on the event loop otherwise), finishes
 * the number of workloads given with no timer flush (so they stay queued), says `ready`, and on
 * SIGTERM closes the history (as `pair serve` does) and exits.
 * Must not know: what the test checks.
 */

import { SYSTEM_RUNTIME } from "@pair/cluster";
import { WorkloadHistory } from "../../src/history/workload-history.js";

const [path, count, writer] = process.argv.slice(2);
if (path === undefined || count === undefined)
  throw new Error("usage: history-writer-child.ts FILE COUNT [thread|loop]");
const history = new WorkloadHistory({
  path,
  maxRows: 100_000,
  maxDays: 30,
  runtime: SYSTEM_RUNTIME,
  flushIntervalMs: 0,
  pruneIntervalMs: 0,
  maxBatch: 1_000_000,
  writeOnThread: writer === "thread",
});
const started = Date.now();
for (let i = 0; i < Number(count); i += 1) {
  const w = history.begin({
    id: `w${i}`,
    model: "m",
    route: "/v1/chat/completions",
    originNode: "node-a",
    requester: "local",
    startedAtMs: started + i,
  });
  w.tokensOut = i;
  history.finish(w, "completed");
}
// One still running at shutdown: recorded as running, then interrupted at the next start.
history.begin({
  id: "late",
  model: "m",
  route: "/v1/chat/completions",
  originNode: "node-a",
  requester: "local",
  startedAtMs: started + Number(count),
});
process.on("SIGTERM", () => {
  history.close();
  process.exit(0);
});
process.stdout.write("ready\n");
setInterval(() => {}, 1_000);
