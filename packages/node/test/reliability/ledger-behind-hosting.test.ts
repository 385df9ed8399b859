// The hosting store (`managed/<node>.db`) and the ledger (`managed/ledger.db`) are two SQLite files,
// committed one after the other: a discharge is committed to the first, then the ledger closes the
// episode in the second. A sponsor killed between the two commits (a crash-jobs run hit it) restarts
// with the obligation discharged and the ledger's episode still open. This test makes that state on
// purpose — the ledger files put back as they were while the cancel was out — and checks that the
// restart closes the ledger's episode from the hosting store's evidence: the job is not billed on for
// ever, and the ledger stays at or above the emulator's meter.
// Needs the OS credential store: run through `bash scripts/test.sh`.
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SqliteLedgerStore } from "@pair/store";
import { createTestCa, type TestCa } from "@pair/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { requireSecretService } from "../credentials/secret-service.js";
import { COLD_START_MS, jobWorld, MIN, NODE, NS, REPO, type JobWorld } from "../rented/job-harness.js";
import { chat, storedHosting } from "./fault-harness.js";

let ca: TestCa;
const worlds: JobWorld[] = [];
beforeEach(async () => {
  await requireSecretService();
  ca ??= await createTestCa();
});
afterEach(async () => {
  for (const w of worlds.splice(0)) {
    w.hf.jobs.faults.clear();
    await w.cleanup();
  }
});

const ledgerFiles = (dir: string) => readdirSync(dir).filter((f) => f.startsWith("ledger.db"));

function ledgerEpisode(w: JobWorld, id: string) {
  const store = new SqliteLedgerStore({ path: join(w.dir, "data", "managed", "ledger.db") });
  try {
    return store.load()?.episodes[id];
  } finally {
    store.close();
  }
}

describe("a sponsor killed between the hosting store's discharge and the ledger's close", () => {
  it("the restart closes the ledger's episode from the hosting store's evidence; nothing is billed on", async () => {
    const w = await jobWorld(ca, {
      windowMin: 120,
      lines: ["    lifecycle: { idle_pause_min: 60, pause_on_sponsor_exit: false }"],
    });
    worlds.push(w);
    await w.start();
    expect((await w.advanceUntil(chat(w.node, REPO), COLD_START_MS + 5 * MIN)).status).toBe(200);
    await w.advance(3 * MIN);
    const [job] = w.hf.jobs.list(NS);
    const managed = join(w.dir, "data", "managed");
    const saved = join(w.dir, "ledger-saved");
    mkdirSync(saved);
    // The cancel is carried out; its answer is held while the ledger files are copied: the ledger as
    // it stood before the discharge (StopRequired accrued, episode open).
    w.hf.jobs.faults.holdNext(1, { path: "/cancel" }, "before-answer");
    const paused = w.node.jobs.node(NODE)!.pause();
    await w.hf.jobs.faults.whenHeld();
    await w.node.close(200); // closes the stores; the held cancel's answer never comes
    for (const f of ledgerFiles(managed)) copyFileSync(join(managed, f), join(saved, f));
    w.hf.jobs.faults.releaseHeld("drop");
    await paused.catch(() => undefined);
    expect(w.hf.jobs.get(job!.id)?.stage).toBe("CANCELED");
    await w.start(); // sees CANCELED: the obligation is discharged in the hosting store, and the ledger closed
    await w.advance(MIN);
    const [record] = Object.keys(storedHosting(join(w.dir, "data"), NODE).deployments);
    expect(storedHosting(join(w.dir, "data"), NODE).obligations[record!]?.state).toBe("discharged");
    expect(ledgerEpisode(w, record!)?.state).toBe("closed");
    await w.node.close(200);
    // Killed between the two commits: the ledger files are those of before the discharge.
    for (const f of ledgerFiles(managed)) rmSync(join(managed, f));
    for (const f of ledgerFiles(saved)) copyFileSync(join(saved, f), join(managed, f));
    expect(ledgerEpisode(w, record!)?.state).toBe("open");

    await w.start();
    await w.advance(2 * MIN);
    expect(ledgerEpisode(w, record!)?.state, "the restart closes the ledger's episode").toBe("closed");
    const spend = () => w.node.jobs.node(NODE)!.view().spend_usd?.total ?? 0;
    const closedAt = spend();
    await w.advance(60 * MIN, MIN);
    expect(spend(), "nothing is billed on for a cancelled job").toBe(closedAt);
    expect(Math.round(closedAt * 1e6)).toBeGreaterThanOrEqual(w.hf.jobs.meter.totalMicroUsd(NS));
  });
});
