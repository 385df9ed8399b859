// The sponsor as a real `pair serve` process with a managed Hugging Face Jobs node, SIGKILLed while it
// cancels a job for one of the two reasons the other crash tests leave out: (a) its batch window
// ended (the window-end cancel), and (b) the job is an orphan found at start-up (PAIR's owner label,
// no record). The emulator holds the `/cancel` so the kill lands exactly: either Hugging Face carried
// the cancel out but its answer never reached PAIR, or it never carried it out (dropped). After the
// restart on the same data dir: the job keeps exactly one open obligation on the same deployment
// record until the evidence of its end closes it, it ends CANCELED (not by Hugging Face's own
// timeout), a cancel is sent again only when the first one was never carried out, nothing is created,
// the ledger is at or above the emulator's meter, and the token is in no file and no line of output.
// Needs the OS credential store: run through `bash scripts/test.sh`.
import { HuggingFaceJobsProvider } from "@pair/huggingface";
import type { DeploymentRecord } from "@pair/provision";
import { describe, expect, it } from "vitest";
import { keyringWorlds } from "../support/keyring-worlds.js";
import {
  JOB_NODE,
  NS,
  REPO,
  chatChild,
  createsReceived,
  expectInvariants,
  expectLedgerCoversMeter,
  ledgerClosed,
  openFor,
  openObligations,
} from "./jobs-child.js";
import { SCALE, sponsorChild, until, type SponsorChild } from "./sponsor-child.js";

/** The Jobs API's cancel (the emulator's fault filter and arrival count). */
const CANCEL = { method: "POST", path: /^\/api\/jobs\/[^/]+\/[^/]+\/cancel$/ } as const;
/** Real ms: the child's 10 s pass, twice, plus slack. */
const ENFORCEMENT_BOUND_MS = 40_000;

/**
 * The window test's timing (virtual): the job is SCHEDULING (free) 600 s, so Hugging Face's own
 * timeout (the window, counted from RUNNING) comes 600 s after PAIR's window end (counted from the
 * create intent). A pass every 200 s sends PAIR's cancel well before that backstop, and a restart
 * has time to send it again: the job can only end by PAIR's cancel.
 */
const WINDOW_SCHEDULING_MS = 600_000;
const WINDOW_MIN = 11;

const worlds = keyringWorlds<SponsorChild>((w) => w.hf.jobs.faults.clear());

/** A child with the `batch` Jobs node: `window_min` as given, never idle within a test (60 min). */
async function world(windowMin: number, schedulingMs: number): Promise<SponsorChild> {
  const w = await sponsorChild(worlds.ca, [], {}, 30_000, {
    jobs: { timings: { schedulingMs, loadMs: 90_000 } },
    nodes: (ref) => [
      `  - name: ${JOB_NODE}`,
      "    provider: huggingface-job",
      `    credential: ${ref}`,
      "    timeouts: { cold_start_s: 60 }",
      "    job:",
      `      repo: ${REPO}`,
      "      flavor: l4x1",
      `      window_min: ${windowMin}`,
      `      secrets: { HF_TOKEN: "${ref}" }`,
      "    lifecycle: { idle_pause_min: 60, exit_timeout_s: 30 }",
      "    budget: { unlimited: true }",
    ],
  });
  return worlds.add(w);
}

const cancels = (w: SponsorChild): number => w.hf.jobs.faults.arrived(CANCEL);

/** The one deployment record of job `id` (by its key), from SQLite. */
function recordOf(w: SponsorChild, id: string): DeploymentRecord {
  const record = Object.values(w.hosting(JOB_NODE).deployments).find((d) => d.key?.incarnation === id);
  if (record === undefined) throw new Error(`no deployment record holds job ${id}`);
  return record;
}

/** Waits until the sponsor's cancel is held by the emulator (its `/cancel` arrived and hangs). */
function cancelHeld(w: SponsorChild, withinMs: number): Promise<true> {
  return until("the cancel is held", () => w.hf.jobs.faults.heldCount > 0 || undefined, withinMs);
}

/**
 * After the last restart: the job ends CANCELED, its obligation closes on that evidence, the ledger
 * closes the episode; one record, nothing created by the sponsor, the ledger at or above the meter.
 */
async function expectCancelledAndClosed(w: SponsorChild, id: string, records: string[], what: string) {
  await until("cancelled", () => w.hf.jobs.get(id)?.stage === "CANCELED", ENFORCEMENT_BOUND_MS);
  await until("discharged", () => openObligations(w.hosting(JOB_NODE)).length === 0, 15_000);
  await ledgerClosed(w, records[0]!);
  await w.kill();
  expectInvariants(w);
  const state = w.hosting(JOB_NODE);
  expect(Object.keys(state.deployments), "the same record, never recorded twice").toEqual(records);
  expect(state.obligations[records[0]!]?.evidence).toBeDefined();
  expect(w.hf.jobs.get(id)?.stage, "ended by PAIR's cancel, not Hugging Face's timeout").toBe("CANCELED");
  expect(createsReceived(w), "creates received").toBe(1);
  expectLedgerCoversMeter(w, what);
}

describe(
  `Hugging Face Jobs window-end cancel interrupted by SIGKILL (pair serve child, time x${SCALE})`,
  { timeout: 150_000 },
  () => {
    for (const when of ["before-answer", "on-release"] as const)
      it(
        when === "before-answer"
          ? "Hugging Face cancelled the job, its answer never reached PAIR: the restart closes the one open obligation on the CANCELED evidence, no second cancel"
          : "the cancel never carried out (dropped): the job bills on with one open obligation; the restart cancels it again and closes it on evidence",
        async () => {
          const w = await world(WINDOW_MIN, WINDOW_SCHEDULING_MS);
          await w.start();
          w.hf.jobs.faults.holdNext(1, CANCEL, when);
          void chatChild(w); // the first request runs the job (its answer does not matter here)
          const job = await until("created", () => w.hf.jobs.list(NS)[0], 10_000);
          await until("billing", () => w.hf.jobs.get(job.id)?.stage === "RUNNING", 45_000);
          await cancelHeld(w, 30_000);
          const records = Object.keys(w.hosting(JOB_NODE).deployments);
          expect(records).toHaveLength(1);
          const record = recordOf(w, job.id);
          expect(record.phase).toBe("StopRequired");
          expect(record.stopReason).toBe("window-ended");
          expect(openFor(w.hosting(JOB_NODE), job.id)).toHaveLength(1);
          await w.kill();
          expect(w.hf.jobs.faults.releaseHeld(when === "before-answer" ? "apply" : "drop")).toBe(1);
          expect(w.hf.jobs.get(job.id)?.stage).toBe(when === "before-answer" ? "CANCELED" : "RUNNING");
          expect(openFor(w.hosting(JOB_NODE), job.id), "open until evidence").toHaveLength(1);
          expectInvariants(w);

          await w.start();
          await expectCancelledAndClosed(w, job.id, records, `window-end cancel ${when}`);
          // One cancel when it was carried out (the restart saw CANCELED); one more when it was dropped.
          expect(cancels(w), "cancels received").toBe(when === "before-answer" ? 1 : 2);
        },
      );
  },
);

/** This sponsor's node id (its owner tag is `pair-<node id>-<node>`), from its admin API. */
async function selfNodeId(w: SponsorChild): Promise<string> {
  const nodes = (await w.admin("/pair/v1/nodes")) as { kind?: string; node_id?: string | null }[];
  const id = nodes.find((n) => n.kind === "self")?.node_id;
  if (typeof id !== "string") throw new Error(`no node id in ${JSON.stringify(nodes)}`);
  return id;
}

/** A job with this sponsor's labels that no record of it holds (its SQLite lost it); its id. */
async function orphanJob(w: SponsorChild, ownerTag: string): Promise<string> {
  const provider = new HuggingFaceJobsProvider({
    transport: w.jobsApi,
    namespace: NS,
    clock: { now: () => ({ wallMs: w.hf.nowMs(), monoMs: performance.now() }) },
  });
  const out = await provider.create({
    spec: {
      provider: "huggingface-job",
      account: NS,
      name: JOB_NODE,
      model: REPO,
      hardware: "l4x1",
      settings: { windowS: 7_200 },
    },
    requestId: "left-behind-1",
    ownerTag,
    epoch: 1,
  });
  if (out.kind !== "created") throw new Error(`orphan create: ${JSON.stringify(out)}`);
  return out.report.key.incarnation;
}

describe(
  `Hugging Face Jobs orphan cancel at start-up interrupted by SIGKILL (pair serve child, time x${SCALE})`,
  { timeout: 90_000 },
  () => {
    for (const when of ["before-answer", "on-release"] as const)
      it(
        when === "before-answer"
          ? "Hugging Face cancelled the orphan, its answer never reached PAIR: the restart keeps the one orphan record and closes its obligation on CANCELED"
          : "the orphan's cancel never carried out (dropped): it bills on under one open obligation; the restart cancels it again on the same record",
        async () => {
          const w = await world(120, 20_000);
          await w.start();
          const ownerTag = `pair-${await selfNodeId(w)}-${JOB_NODE}`;
          await w.kill();
          const id = await orphanJob(w, ownerTag);
          await until("billing", () => w.hf.jobs.get(id)?.stage === "RUNNING", 10_000);

          w.hf.jobs.faults.holdNext(1, CANCEL, when);
          await w.start();
          await cancelHeld(w, ENFORCEMENT_BOUND_MS);
          const record = recordOf(w, id);
          expect(record.origin).toBe("orphan");
          expect(record.phase).toBe("StopRequired");
          const records = Object.keys(w.hosting(JOB_NODE).deployments);
          expect(records).toEqual([record.id]);
          expect(openFor(w.hosting(JOB_NODE), id)).toHaveLength(1);
          await w.kill();
          expect(w.hf.jobs.faults.releaseHeld(when === "before-answer" ? "apply" : "drop")).toBe(1);
          expect(w.hf.jobs.get(id)?.stage).toBe(when === "before-answer" ? "CANCELED" : "RUNNING");
          expect(openFor(w.hosting(JOB_NODE), id), "open until evidence").toHaveLength(1);
          expectInvariants(w);

          await w.start();
          await expectCancelledAndClosed(w, id, records, `orphan cancel ${when}`);
          expect(cancels(w), "cancels received").toBe(when === "before-answer" ? 1 : 2);
        },
      );
  },
);
