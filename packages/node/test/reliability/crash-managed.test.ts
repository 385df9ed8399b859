// The sponsor as a real `pair serve` process, SIGKILLed at the interesting points of a managed
// Hugging Face endpoint's life — mid-stream, during the pause at exit, during start-up adoption and
// reconciliation, right after a wake was sent but before its answer was stored — and started again
// on the same data dir. After each: every billing resource has an open obligation, nothing was
// adopted or resumed twice, no obligation was discharged without evidence, idle enforcement resumes
// (it pauses the endpoint again), the ledger is never under the emulator's meter, and the HF token is in no file of the data
// dir and no line of output. A crash during *create*: crash-create.test.ts.
// Needs the OS credential store: run through `bash scripts/test.sh`.
import { granulesCostMicroUsd } from "@pair/ledger";
import { describe, expect, it } from "vitest";
import { chat as chatThrough, streamChat } from "./crash-clients.js";
import { MIN, MODEL, SCALE, sponsorChild, until, type SponsorChild } from "./sponsor-child.js";
import { killDuringStartUp } from "./sponsor-process.js";
import { keyringWorlds } from "../support/keyring-worlds.js";

const L4_MICRO_USD_PER_HOUR = 800_000;
/** Real ms: the child's 10 s pass, twice, plus slack (idle_pause_min: 1 is 3 s real). */
const ENFORCEMENT_BOUND_MS = 30_000;

const worlds = keyringWorlds<SponsorChild>();

async function world(
  lifecycle: string,
  at: "pending" | "paused",
  engine?: { tokenDelayMs?: number; maxTokens?: number },
  pendingMs?: number,
): Promise<SponsorChild> {
  return worlds.add(
    await sponsorChild(worlds.ca, [`    lifecycle: ${lifecycle}`], engine, pendingMs, {
      endpoint: { other: true, paused: at === "paused" },
    }),
  );
}

const qwenState = (w: SponsorChild) => w.hf.endpoints.get("alice", "qwen")?.state;

/**
 * The invariants after any crash, read from the child's SQLite and the emulator: each billed stretch
 * of alice/qwen still open has an open obligation; at most one open obligation per resource; every
 * discharged obligation carries evidence; the other endpoint was never touched and nothing new exists.
 */
function expectInvariants(w: SponsorChild): void {
  const state = w.hosting();
  const obligations = Object.values(state.obligations);
  const keyOf = (o: (typeof obligations)[number]) => o.key ?? state.deployments[o.deploymentId]?.key;
  const billing = w.hf.meter.stretches().filter((s) => s.name === "qwen" && s.endMs === undefined);
  for (const stretch of billing) {
    const covering = obligations.filter(
      (o) => o.state === "open" && keyOf(o)?.name === "qwen" && keyOf(o)?.incarnation === stretch.createdAt,
    );
    expect(covering, `open obligation for billing qwen@${stretch.createdAt}`).toHaveLength(1);
  }
  const openKeys = obligations.filter((o) => o.state === "open").map((o) => JSON.stringify(keyOf(o)));
  expect(new Set(openKeys).size, "one open obligation per resource").toBe(openKeys.length);
  for (const o of obligations.filter((x) => x.state === "discharged"))
    expect(o.evidence, `evidence of discharged ${o.deploymentId}`).toBeDefined();
  expect(
    w.hf.endpoints
      .list("alice")
      .map((e) => e.name)
      .sort(),
  ).toEqual(["qwen", "someone-elses"]);
  expect(w.hf.endpoints.get("alice", "someone-elses")?.state).not.toBe("paused");
  // The token (in the OS credential store) is in no file of the data dir (SQLite, WAL, history,
  // admin files) and in no line the sponsor printed, crash or not.
  expect(w.tokenLeaks()).toEqual([]);
}

/**
 * The ledger against the emulator's meter: never under it (cost is a safety property: a budget stop
 * must not come late). It may be over: with time x20 the child's 10 s pass is 200 virtual s, and both
 * the cautious start (a run begins at the idle look before the charging one) and the outage rule
 * (a restart bills the outage as charging when either end charged) count those gaps as billed —
 * docs/ledger.md states that bound and packages/ledger/test proves it. Prints both for docs/reliability.md.
 */
function reportLedgerAndMeter(w: SponsorChild, scenario: string): void {
  const minutes = w.hf.meter.billedMinutes("alice", "qwen");
  const meterMicroUsd = granulesCostMicroUsd(minutes, MIN, L4_MICRO_USD_PER_HOUR);
  const ledgerMicroUsd = w.spend()?.totalMicroUsd ?? 0;
  expect(minutes).toBeGreaterThan(0);
  expect(ledgerMicroUsd, `ledger ≥ meter (${minutes} min)`).toBeGreaterThanOrEqual(meterMicroUsd);
  console.log(
    `crash ${scenario}: meter ${minutes} min = ${meterMicroUsd} µUSD, ledger ${ledgerMicroUsd} µUSD`,
  );
}

/** After the restart the idle rule pauses it again, by evidence, and no obligation stays open. */
async function expectIdleEnforcementResumes(
  w: SponsorChild,
  scenario: string,
  boundMs = ENFORCEMENT_BOUND_MS,
): Promise<void> {
  await until("idle pause after restart", () => qwenState(w) === "paused", boundMs);
  await until(
    "obligation discharged",
    () => Object.values(w.hosting().obligations).every((o) => o.state !== "open"),
    5_000,
  );
  await w.kill(); // the ledger is read from SQLite; the last tick before the pause is committed
  expectInvariants(w);
  reportLedgerAndMeter(w, scenario);
}

const chat = (w: SponsorChild) => chatThrough(w.url, MODEL);

function openObligationCount(w: SponsorChild): number {
  return Object.values(w.hosting().obligations).filter((o) => o.state === "open").length;
}

describe(
  `managed endpoint sponsor killed with SIGKILL (pair serve child, time x${SCALE})`,
  { timeout: 90_000 },
  () => {
    it("mid-stream: the client sees the stream break; on restart the obligation is restored, not doubled, and idle pauses it", async () => {
      const w = await world("{ idle_pause_min: 1 }", "paused", { tokenDelayMs: 50, maxTokens: 400 });
      await w.start();
      let firstBytes!: () => void;
      const streaming = new Promise<void>((resolve) => (firstBytes = resolve));
      const outcome = streamChat(w.url, MODEL, () => firstBytes()).then(
        (text) => ({ ok: true as const, text }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      await streaming; // woke it (resume → running) and the first tokens are on the wire
      expect(qwenState(w)).toBe("running");
      const deploymentsBefore = Object.keys(w.hosting().deployments);
      await w.kill();
      const result = await outcome;
      expect(result.ok && result.text.includes("[DONE]")).toBe(false); // never a clean end
      expectInvariants(w);
      expect(openObligationCount(w)).toBe(1);

      await w.start();
      expect(Object.keys(w.hosting().deployments)).toEqual(deploymentsBefore);
      expectInvariants(w);
      await expectIdleEnforcementResumes(w, "mid-stream");
    });

    it("during the pause at exit (SIGTERM, pause refused and retried, then SIGKILL): the obligation stays open and the restart pauses it", async () => {
      const w = await world("{ idle_pause_min: 60, exit_timeout_s: 30 }", "paused");
      await w.start();
      expect(await chat(w)).toBe(200); // woken by PAIR: the ledger sees every billed minute
      expect(openObligationCount(w)).toBe(1);
      w.hf.faults.failNext(1_000, 503, { path: "/pause" }); // every pause refused: it stays unconfirmed
      w.term();
      await until("stopping", () => w.output.includes("stopping"), 5_000);
      await new Promise((r) => setTimeout(r, 1_500)); // the pause was sent and is unconfirmed
      expect(w.process?.exitCode).toBeNull(); // still waiting for the confirmation
      await w.kill();
      expect(qwenState(w)).toBe("running"); // still billing
      expectInvariants(w);
      expect(openObligationCount(w)).toBe(1);

      w.hf.faults.clear();
      await w.start();
      expectInvariants(w);
      // Restored: the required stop is carried out again (idle is 60 min, so this is the exit pause).
      await until("paused after restart", () => qwenState(w) === "paused", ENFORCEMENT_BOUND_MS);
      await until("discharged", () => openObligationCount(w) === 0, 5_000);
      await w.kill();
      expectInvariants(w);
      reportLedgerAndMeter(w, "pause-at-exit");
    });

    it("during start-up adoption and reconciliation (killed three times at staggered points): adopted once, and idle pauses it", async () => {
      // Pending for 24 s (real): the restarts all happen before it bills.
      const w = await world("{ idle_pause_min: 1 }", "pending", undefined, 8 * MIN);
      await killDuringStartUp(w, () => expectInvariants(w));
      await w.start();
      await until("adopted", () => openObligationCount(w) === 1, 10_000);
      const live = Object.values(w.hosting().deployments).filter((d) => d.key?.name === "qwen");
      expect(new Set(live.map((d) => d.key?.incarnation)).size).toBe(1);
      expectInvariants(w);
      // It may still be pending for most of its 24 s when this start comes: it can only be paused for
      // idleness once it runs (then 1 virtual minute idle = 3 s, and a pass every 10 s).
      await expectIdleEnforcementResumes(w, "adoption", 24_000 + ENFORCEMENT_BOUND_MS);
    });

    it("right after a wake (resume applied, its answer lost, then SIGKILL): the restart finds the billing endpoint and enforces idle", async () => {
      // Resumed, it is pending for 15 s (real): the restart observes it before it bills.
      const w = await world("{ idle_pause_min: 1 }", "paused", undefined, 5 * MIN);
      await w.start();
      w.hf.faults.loseAnswers(1, { method: "POST", path: "/resume" });
      const asked = chat(w);
      await until("resume applied", () => qwenState(w) !== "paused", 10_000);
      await w.kill();
      expect(await asked).not.toBe(200);
      expectInvariants(w);

      await w.start();
      await until("billing resource covered", () => openObligationCount(w) === 1, 20_000);
      expectInvariants(w);
      await expectIdleEnforcementResumes(w, "after-wake", 45_000);
    });
  },
);
