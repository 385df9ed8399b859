// The sponsor as a real `pair serve` process with a managed Runpod node (`pod:`: PAIR creates the
// pod on demand), SIGKILLed at the interesting points of a pod's life and started again on the same
// data dir: during the create (Runpod carried it out but PAIR never got, so never stored, the answer;
// carried out with the sponsor dead; never carried out), mid-stream, during the terminate at exit
// (refused, or carried out with its answer lost), and during start-up adoption and reconciliation.
// After each: every pod that bills has an open obligation (by its id, or by the request id of a
// create whose answer is unknown), no pod was created twice (the emulator counts the creates),
// obligations close only on evidence, idle (or exit) terminates the pod, the ledger is never under
// the emulator's meter, and neither key is in any file or line of output.
// Needs the OS credential store: run through `bash scripts/test.sh`.
import { IDENTITY_ENV } from "@pair/runpod";
import type { HostingState } from "@pair/provision";
import { describe, expect, it, type TestContext } from "vitest";
import { keyringCa } from "../support/keyring-worlds.js";
import { chat as chatThrough, streamChat } from "./crash-clients.js";
import { runpodSponsorChild, SERVED, type RunpodSponsorChild } from "./runpod-sponsor-child.js";
import { killDuringStartUp, SCALE, until } from "./sponsor-process.js";

/** Real ms: the pod's start (3.25 s), the child's 10 s pass twice, one idle minute (3 s), slack. */
const ENFORCEMENT_BOUND_MS = 35_000;

// The CA only: each test's world is cleaned up when that test finishes (keyringWorlds cleans up after
// each test every world of the file, which would end the worlds of the tests still running).
const keyring = keyringCa();

/** Each test's own world (the tests run concurrently), cleaned up when that test finishes. */
async function world(
  t: TestContext,
  options: Parameters<typeof runpodSponsorChild>[1] = {},
): Promise<RunpodSponsorChild> {
  const w = await runpodSponsorChild(keyring.ca, options);
  t.onTestFinished(() => w.cleanup());
  return w;
}

const openObligations = (state: HostingState) =>
  Object.values(state.obligations).filter((o) => o.state === "open");

/**
 * After any kill: each pod that bills (not TERMINATED) is covered by exactly one open obligation —
 * by its pod id, or, while the create's answer is unknown, by the request id the pod carries — at
 * most one open obligation per pod, discharged ones carry evidence, and no key leaked.
 */
function expectInvariants(w: RunpodSponsorChild): void {
  const state = w.hosting();
  const open = openObligations(state);
  const keyOf = (o: (typeof open)[number]) => o.key ?? state.deployments[o.deploymentId]?.key;
  for (const pod of w.livePods()) {
    const requestId = pod.containerEnv[IDENTITY_ENV.requestId];
    const covering = open.filter((o) =>
      keyOf(o) === undefined
        ? state.deployments[o.deploymentId]?.intent?.requestId === requestId
        : keyOf(o)?.incarnation === pod.wire.id,
    );
    expect(covering, `open obligation for billing pod ${pod.wire.id}`).toHaveLength(1);
  }
  const keys = open.map((o) => JSON.stringify(keyOf(o) ?? o.deploymentId));
  expect(new Set(keys).size, "one open obligation per pod").toBe(keys.length);
  for (const o of Object.values(state.obligations).filter((x) => x.state === "discharged"))
    expect(o.evidence, `evidence of discharged ${o.deploymentId}`).toBeDefined();
  expect(w.tokenLeaks()).toEqual([]);
}

/** After the restart: the pod is terminated (idle or exit), its obligation discharged, then the ledger against the meter. */
async function expectTerminatedAndBilled(
  w: RunpodSponsorChild,
  scenario: string,
  creates: number,
): Promise<void> {
  await until("pod terminated after restart", () => w.livePods().length === 0, ENFORCEMENT_BOUND_MS);
  await until("obligation discharged", () => openObligations(w.hosting()).length === 0, 10_000);
  await w.kill(); // the ledger is read from SQLite: its last accrual is committed
  expectInvariants(w);
  expect(w.createsReceived(), "creates sent").toBe(creates);
  const meter = w.meterMicroUsd();
  const ledger = w.spend()?.totalMicroUsd ?? 0;
  expect(meter).toBeGreaterThan(0);
  expect(ledger, `ledger ≥ meter`).toBeGreaterThanOrEqual(meter);
  console.log(`crash runpod ${scenario}: meter ${meter} µUSD, ledger ${ledger} µUSD`);
}

const chat = (w: RunpodSponsorChild) => chatThrough(w.url, SERVED);

// Concurrent: each test waits mostly on the child's 10 s passes, so together they take about as long as the longest.
describe.concurrent(
  `managed Runpod pod, sponsor killed with SIGKILL (pair serve child, time x${SCALE})`,
  { timeout: 90_000 },
  () => {
    for (const when of ["before-answer", "on-release"] as const)
      it(
        when === "before-answer"
          ? "during the create, after Runpod created the pod, before PAIR got (and stored) the answer: the restart binds it to its one obligation and idle terminates it"
          : "during the create, before Runpod carried it out, which it then does with the sponsor dead: the restart finds it, covers it once, and idle terminates it",
        async (t) => {
          const w = await world(t);
          await w.start();
          w.emu.faults.holdNext(1, "create", when);
          const asked = chat(w);
          await w.emu.faults.whenHeld();
          // Durable before it was sent: the declaration and its intent (the obligation) are in SQLite.
          const before = w.hosting();
          expect(Object.keys(before.deployments)).toHaveLength(1);
          expect(openObligations(before)).toHaveLength(1);
          await w.kill();
          expect(await asked).toBe("cut");
          w.emu.faults.releaseHeld("apply"); // carried out (or already was): nobody hears the answer
          await until("created", () => w.livePods().length === 1, 2_000);
          expectInvariants(w);

          await w.start();
          await until(
            "the restart binds the created pod",
            () => Object.values(w.hosting().deployments).some((d) => d.key !== undefined),
            ENFORCEMENT_BOUND_MS,
          );
          expect(Object.keys(w.hosting().deployments)).toEqual(Object.keys(before.deployments));
          expectInvariants(w);
          await expectTerminatedAndBilled(w, `create ${when}`, 1);
        },
      );

    it("during the create, before Runpod carried it out, never to be: the restart closes the create on complete listings and creates nothing", async (t) => {
      const w = await world(t);
      await w.start();
      w.emu.faults.holdNext(1, "create", "on-release");
      const asked = chat(w);
      await w.emu.faults.whenHeld();
      await w.kill();
      expect(await asked).toBe("cut");
      expect(w.emu.faults.releaseHeld("drop")).toBe(1);
      expect(openObligations(w.hosting())).toHaveLength(1); // unknown: it may exist
      expectInvariants(w);

      await w.start();
      await until(
        "closed on the evidence of a complete listing",
        () => openObligations(w.hosting()).length === 0,
        ENFORCEMENT_BOUND_MS,
      );
      const [discharged] = Object.values(w.hosting().obligations);
      expect(discharged?.evidence?.kind).toBe("absent-from-complete-listing");
      // Another pass (10 s real): still nothing is created.
      await new Promise((r) => setTimeout(r, 11_000));
      await w.kill();
      expectInvariants(w);
      expect(w.emu.pods.list()).toEqual([]);
      expect(w.createsReceived(), "creates sent").toBe(1);
      expect(w.meterMicroUsd()).toBe(0);
    });

    it("mid-stream: the client sees the stream break; on restart the pod is adopted (not created again) and idle terminates it", async (t) => {
      const w = await world(t, { emulator: { tokenDelayMs: 50 } });
      await w.start();
      let firstBytes!: () => void;
      const streaming = new Promise<void>((resolve) => (firstBytes = resolve));
      const outcome = streamChat(w.url, SERVED, () => firstBytes()).then(
        (text) => ({ ok: true as const, text }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      await streaming; // the pod was created, serves, and the first tokens are on the wire
      expect(w.livePods()).toHaveLength(1);
      const deploymentsBefore = Object.keys(w.hosting().deployments);
      await w.kill();
      const result = await outcome;
      expect(result.ok && result.text.includes("[DONE]")).toBe(false); // never a clean end
      expectInvariants(w);
      expect(openObligations(w.hosting())).toHaveLength(1);

      await w.start();
      expect(Object.keys(w.hosting().deployments)).toEqual(deploymentsBefore);
      expectInvariants(w);
      await expectTerminatedAndBilled(w, "mid-stream", 1);
    });

    it("during the terminate at exit (SIGTERM, every terminate refused, then SIGKILL): the obligation stays open and the restart terminates the pod", async (t) => {
      const w = await world(t, { idleMin: 60 });
      await w.start();
      expect(await chat(w)).toBe(200);
      expect(openObligations(w.hosting())).toHaveLength(1);
      w.emu.faults.failNextCalls(100_000, 503); // every call refused: the terminate stays unconfirmed
      w.term();
      await until("stopping", () => w.output.includes("stopping"), 5_000);
      await new Promise((r) => setTimeout(r, 1_500));
      expect(w.process?.exitCode).toBeNull(); // still waiting for the evidence
      await w.kill();
      expect(w.livePods()).toHaveLength(1); // still billing
      expectInvariants(w);
      expect(openObligations(w.hosting())).toHaveLength(1);

      w.emu.faults.clear();
      await w.start();
      expectInvariants(w);
      // Restored: the required stop is carried out again (idle is 60 min, so this is the exit's terminate).
      await expectTerminatedAndBilled(w, "terminate-at-exit refused", 1);
    });

    it("during the terminate at exit (SIGTERM, the terminate carried out but its answer lost, then SIGKILL): the restart closes the obligation on evidence and creates nothing", async (t) => {
      const w = await world(t, { idleMin: 60 });
      await w.start();
      expect(await chat(w)).toBe(200);
      w.emu.faults.holdNext(1, "terminate", "before-answer");
      w.term();
      await w.emu.faults.whenHeld();
      await w.kill();
      w.emu.faults.releaseHeld(); // terminated; the answer finds nobody
      expect(w.livePods()).toHaveLength(0);
      expect(openObligations(w.hosting())).toHaveLength(1); // PAIR has no evidence yet
      expectInvariants(w);

      await w.start();
      await expectTerminatedAndBilled(w, "terminate-at-exit lost", 1);
    });

    it("during start-up adoption and reconciliation (killed three times at staggered points): adopted once, never created again, and idle terminates it", async (t) => {
      const w = await world(t);
      await w.start();
      expect(await chat(w)).toBe(200);
      await w.kill();
      const [podId] = w.livePods().map((p) => p.wire.id);
      await killDuringStartUp(w, () => expectInvariants(w));
      await w.start();
      const live = Object.values(w.hosting().deployments).filter((d) => d.key !== undefined);
      expect(new Set(live.map((d) => d.key?.incarnation))).toEqual(new Set([podId]));
      expectInvariants(w);
      await expectTerminatedAndBilled(w, "adoption", 1);
    });
  },
);
