// The sponsor as a real `pair serve` process with a managed Hugging Face Jobs node, SIGKILLed while it
// creates the job a client's request asked for: the emulator holds the Jobs API create so the kill
// lands exactly (1) after Hugging Face created the job but before its answer reached PAIR (so before
// PAIR could store its id), (2) before Hugging Face carried it out, which it then does with the
// sponsor dead, and (3) before it was carried out, never to be. After the restart on the same data
// dir: the job is bound to the same deployment record by reconciliation (owner label and request id),
// covered by exactly one open obligation, never created a second time, and cancelled when idle, its
// obligation closing on the evidence of its end; a create that never happened is closed on the
// evidence of complete listings and nothing is created. Ledger ≥ meter; the token is nowhere.
// Needs the OS credential store: run through `bash scripts/test.sh`.
import { describe, expect, it } from "vitest";
import {
  CREATE,
  JOB_NODE,
  NS,
  chatChild,
  createsReceived,
  expectInvariants,
  expectLedgerCoversMeter,
  jobsChild,
  ledgerClosed,
  openObligations,
} from "./jobs-child.js";
import { SCALE, until, type SponsorChild } from "./sponsor-child.js";
import { keyringWorlds } from "../support/keyring-worlds.js";

/** Real ms: the child's 10 s pass, twice, plus slack (one idle minute is 3 s real). */
const ENFORCEMENT_BOUND_MS = 40_000;

const worlds = keyringWorlds<SponsorChild>((w) => w.hf.jobs.faults.clear());

async function world(): Promise<SponsorChild> {
  const w = worlds.add(await jobsChild(worlds.ca));
  await w.start();
  return w;
}

/** Kills the child while the job's create is held (`when`); returns the deployment ids before the kill. */
async function killDuringCreate(w: SponsorChild, when: "before-answer" | "on-release"): Promise<string[]> {
  w.hf.jobs.faults.holdNext(1, CREATE, when);
  const answered = chatChild(w);
  await w.hf.jobs.faults.whenHeld();
  // Durable before it was sent: the declaration, its intent and its obligation are in SQLite.
  const before = w.hosting(JOB_NODE);
  expect(Object.keys(before.deployments)).toHaveLength(1);
  expect(openObligations(before)).toHaveLength(1);
  await w.kill();
  expect(await answered).toBe("cut");
  return Object.keys(before.deployments);
}

describe(
  `Hugging Face Jobs create interrupted by SIGKILL (pair serve child, time x${SCALE})`,
  { timeout: 90_000 },
  () => {
    for (const when of ["before-answer", "on-release"] as const)
      it(
        when === "before-answer"
          ? "after Hugging Face created the job, before PAIR got (and stored) its id: the restart binds it to the same record and one obligation, idle cancels it"
          : "before Hugging Face carried it out, which it then does with the sponsor dead: the restart finds it, covers it once, idle cancels it",
        async () => {
          const w = await world();
          const ids = await killDuringCreate(w, when);
          w.hf.jobs.faults.releaseHeld("apply"); // carried out (or already was): nobody hears the answer
          const job = await until("created", () => w.hf.jobs.list(NS)[0], 2_000);
          // It starts billing (RUNNING after 1 s real) while the sponsor is dead: the open create
          // obligation, not yet bound to the job's id, is what covers it.
          await until("billing", () => w.hf.jobs.get(job.id)?.stage === "RUNNING", 5_000);
          expectInvariants(w, false);

          await w.start();
          await until(
            "the restart binds the job",
            () => Object.values(w.hosting(JOB_NODE).deployments).some((d) => d.key?.incarnation === job.id),
            ENFORCEMENT_BOUND_MS,
          );
          expect(Object.keys(w.hosting(JOB_NODE).deployments)).toEqual(ids); // the same record
          expectInvariants(w);
          // No request: one idle minute (3 s real) later a pass cancels it; its end closes the obligation.
          await until("idle cancel", () => w.hf.jobs.get(job.id)?.stage === "CANCELED", ENFORCEMENT_BOUND_MS);
          await until("discharged", () => openObligations(w.hosting(JOB_NODE)).length === 0, 15_000);
          await ledgerClosed(w, ids[0]!);
          await w.kill();
          expectInvariants(w);
          expect(createsReceived(w), "creates sent").toBe(1);
          expect(w.hf.jobs.meter.billedMinutes(NS)).toBeGreaterThan(0);
          expectLedgerCoversMeter(w, `create ${when}`);
        },
      );

    it("before Hugging Face carried it out, never to be: the restart closes the create on complete listings and creates nothing", async () => {
      const w = await world();
      await killDuringCreate(w, "on-release");
      expect(w.hf.jobs.faults.releaseHeld("drop")).toBe(1);
      expect(openObligations(w.hosting(JOB_NODE))).toHaveLength(1); // unknown: it may exist
      expectInvariants(w);

      await w.start();
      await until(
        "closed on the evidence of a complete listing",
        () => openObligations(w.hosting(JOB_NODE)).length === 0,
        ENFORCEMENT_BOUND_MS,
      );
      const [discharged] = Object.values(w.hosting(JOB_NODE).obligations);
      expect(discharged?.evidence?.kind).toBe("absent-from-complete-listing");
      await new Promise((r) => setTimeout(r, 11_000)); // one more pass (10 s real): still nothing
      await w.kill();
      expectInvariants(w);
      expect(w.hf.jobs.list(NS)).toEqual([]);
      expect(createsReceived(w), "creates sent").toBe(1);
      expect(w.hf.jobs.meter.billedMinutes(NS)).toBe(0);
    });
  },
);
