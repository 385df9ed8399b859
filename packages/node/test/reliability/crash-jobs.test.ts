// The sponsor as a real `pair serve` process with a managed Hugging Face Jobs node, SIGKILLed at the
// points of a job's life after its create: mid-stream (a client's stream from the job's exposed port
// on the wire; the restart's first price read then held 7 s real, as under heavy load), during the cancel at exit (SIGTERM, every cancel refused, SIGKILL while unconfirmed),
// and during start-up adoption (three kills at 0, 300 and 900 ms after the port answers). After each
// restart on the same data dir: the running (billed) job has exactly one open obligation, on the same
// deployment record (never adopted twice), nothing is created, the obligation closes only on the
// evidence of the job's end, idle (or the required stop) cancels it, and the ledger is at or above
// the emulator's meter. The token is in no file and no line of output.
// Needs the OS credential store: run through `bash scripts/test.sh`.
import { describe, expect, it } from "vitest";
import {
  JOB_NODE,
  NS,
  chatChild,
  createsReceived,
  expectInvariants,
  expectLedgerCoversMeter,
  jobsChild,
  ledgerClosed,
  openFor,
  openObligations,
  streamChild,
} from "./jobs-child.js";
import { SCALE, until, type SponsorChild } from "./sponsor-child.js";
import { keyringWorlds } from "../support/keyring-worlds.js";

/** Real ms: the child's 10 s pass, twice, plus slack (one idle minute is 3 s real). */
const ENFORCEMENT_BOUND_MS = 40_000;
/** The Jobs hardware list: the flavor's price, read by a restarted child's first pass. */
const HARDWARE = { method: "GET", path: /^\/api\/jobs\/hardware$/ } as const;
/** Real ms the restart's price read is held in the mid-stream case (over two billed minutes at x20). */
const SLOW_PRICE_READ_MS = 7_000;

const worlds = keyringWorlds<SponsorChild>((w) => w.hf.jobs.faults.clear());

/** A child whose job runs (a first request brought it up: scheduling 1 s, load 4.5 s real). */
async function running(engine: { tokenDelayMs?: number; maxTokens?: number } = {}) {
  const w = worlds.add(await jobsChild(worlds.ca, engine));
  await w.start();
  expect(await chatChild(w)).toBe(200);
  const [job] = w.hf.jobs.list(NS);
  expect(job?.stage).toBe("RUNNING");
  return { w, id: job!.id, records: Object.keys(w.hosting(JOB_NODE).deployments) };
}

/** After the last restart: idle cancels the job, its end discharges the obligation; nothing was created again. */
async function expectIdleCancel(w: SponsorChild, id: string, records: string[], what: string) {
  await until("idle cancel", () => w.hf.jobs.get(id)?.stage === "CANCELED", ENFORCEMENT_BOUND_MS);
  await until("discharged", () => openObligations(w.hosting(JOB_NODE)).length === 0, 15_000);
  await ledgerClosed(w, records[0]!);
  await w.kill();
  expectInvariants(w);
  const state = w.hosting(JOB_NODE);
  expect(Object.keys(state.deployments)).toEqual(records); // never adopted twice
  expect(state.obligations[records[0]!]?.evidence).toBeDefined();
  expect(createsReceived(w), "creates sent").toBe(1);
  expectLedgerCoversMeter(w, what);
}

describe(
  `Hugging Face Jobs sponsor killed with SIGKILL (pair serve child, time x${SCALE})`,
  { timeout: 90_000 },
  () => {
    it("mid-stream: the client's stream breaks; the running job keeps one open obligation on the same record; idle cancels it after the restart", async () => {
      const { w, id, records } = await running({ tokenDelayMs: 100, maxTokens: 200 });
      let firstBytes = () => {};
      const streaming = new Promise<void>((resolve) => (firstBytes = resolve));
      const outcome = streamChild(w, () => firstBytes()).then(
        (text) => text,
        () => "cut",
      );
      await streaming;
      await w.kill();
      const text = await outcome;
      expect(text === "cut" || !text.includes("[DONE]"), "the stream broke").toBe(true);
      expect(w.hf.jobs.get(id)?.stage).toBe("RUNNING"); // billing on, with the sponsor dead
      expect(openFor(w.hosting(JOB_NODE), id)).toHaveLength(1);
      expectInvariants(w);

      // The restart's first pass waits for the hardware list (the price) as under heavy load: 7 s real,
      // over two billed minutes at x20. The job bills on meanwhile, at its price (it was billed at 0).
      const readsBefore = w.hf.jobs.faults.arrived(HARDWARE);
      w.hf.jobs.faults.holdNext(1, HARDWARE);
      setTimeout(() => w.hf.jobs.faults.releaseHeld("apply"), SLOW_PRICE_READ_MS);
      await w.start();
      await until(
        "the restart asked for the price",
        () => w.hf.jobs.faults.arrived(HARDWARE) > readsBefore || undefined,
        15_000,
      );
      expectInvariants(w);
      expect(Object.keys(w.hosting(JOB_NODE).deployments)).toEqual(records);
      await expectIdleCancel(w, id, records, "mid-stream");
    });

    it("during the cancel at exit (SIGTERM, every cancel refused, SIGKILL while unconfirmed): it stays open in SQLite; the restart cancels it and closes it on evidence", async () => {
      const { w, id, records } = await running();
      w.hf.jobs.faults.failNext(1_000_000, 503, { path: "/cancel" });
      w.term();
      await until("a cancel was sent", () => w.hf.jobs.faults.arrived({ path: "/cancel" }) >= 1, 10_000);
      await new Promise((r) => setTimeout(r, 500));
      await w.kill();
      expect(w.hf.jobs.get(id)?.stage).toBe("RUNNING");
      const state = w.hosting(JOB_NODE);
      expect(openFor(state, id)).toHaveLength(1);
      expect(state.deployments[records[0]!]?.phase).toBe("StopRequired");
      expectInvariants(w);
      w.hf.jobs.faults.clear();

      await w.start(); // the required stop is restored and sent again (backoff ≤ 60 s virtual = 3 s real)
      await until("cancelled", () => w.hf.jobs.get(id)?.stage === "CANCELED", ENFORCEMENT_BOUND_MS);
      await until("discharged", () => openObligations(w.hosting(JOB_NODE)).length === 0, 15_000);
      await ledgerClosed(w, records[0]!);
      await w.kill();
      expectInvariants(w);
      expect(Object.keys(w.hosting(JOB_NODE).deployments)).toEqual(records);
      expect(w.hosting(JOB_NODE).obligations[records[0]!]?.evidence).toBeDefined();
      expect(createsReceived(w)).toBe(1);
      expectLedgerCoversMeter(w, "cancel at exit");
    });

    it("during start-up adoption (kills at 0, 300 and 900 ms after the port answers): one record, one open obligation; idle cancels it", async () => {
      const { w, id, records } = await running();
      await w.kill();
      for (const afterMs of [0, 300, 900]) {
        await w.start();
        await new Promise((r) => setTimeout(r, afterMs));
        await w.kill();
        expect(w.hf.jobs.get(id)?.stage).toBe("RUNNING");
        expect(Object.keys(w.hosting(JOB_NODE).deployments)).toEqual(records);
        expect(openFor(w.hosting(JOB_NODE), id)).toHaveLength(1);
        expectInvariants(w);
      }
      await w.start();
      await expectIdleCancel(w, id, records, "adoption (3 kills)");
    });
  },
);
