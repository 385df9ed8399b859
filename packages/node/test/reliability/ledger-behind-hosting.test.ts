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
import { describe, expect, it } from "vitest";
import { jobWorld, MIN, NODE, NS, REPO, startServed, type JobWorld } from "../rented/job-harness.js";
import { chat, storedHosting } from "./fault-harness.js";
import { keyringWorlds } from "../support/keyring-worlds.js";

const worlds = keyringWorlds<JobWorld>((w) => w.hf.jobs.faults.clear());

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
    const w = worlds.add(
      await jobWorld(worlds.ca, {
        windowMin: 120,
        lines: ["    lifecycle: { idle_pause_min: 60, pause_on_sponsor_exit: false }"],
      }),
    );
    await startServed(w, () => chat(w.node, REPO));
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
