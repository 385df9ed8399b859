// The sponsor as a real `pair serve` process, SIGKILLed while it creates a managed Hugging Face
// endpoint (`POST /pair/v1/rented/create`, what `pair rented create` sends): the emulator holds the
// create request so the kill lands exactly (1) after Hugging Face carried it out but before its answer
// reached PAIR (so before PAIR could store it), (2) before Hugging Face carried it out, which it then
// does anyway with the sponsor dead, and (3) before it was carried out, never to be. After the restart
// on the same data dir: the created endpoint is covered by exactly one open obligation (bound by
// reconciliation, never created a second time) and idle enforcement pauses it; a create that never
// happened is closed on the evidence of complete listings, and nothing is created. The token is in no
// file and no line of output.
// Needs the OS credential store: run through `bash scripts/test.sh`.
import { granulesCostMicroUsd } from "@pair/ledger";
import type { HostingState } from "@pair/provision";
import { describe, expect, it } from "vitest";
import { statusOrCut } from "./crash-clients.js";
import { SCALE, sponsorChild, until, type SponsorChild } from "./sponsor-child.js";
import { keyringWorlds } from "../support/keyring-worlds.js";

/** The node (and endpoint) the test creates. */
const FRESH = "fresh";
/** Real ms: the child's 10 s pass, twice, plus slack; the endpoint is pending 1.5 s and initializing 3 s. */
const ENFORCEMENT_BOUND_MS = 40_000;
const L4_MICRO_USD_PER_HOUR = 800_000;
const CREATE = { method: "POST", path: /^\/v2\/endpoint\/alice$/ } as const;

const worlds = keyringWorlds<SponsorChild>();

// The configured node's endpoint exists and is paused: it must stay untouched throughout.
const world = async () =>
  worlds.add(
    await sponsorChild(worlds.ca, ["    lifecycle: { idle_pause_min: 60 }"], {}, 30_000, {
      endpoint: { paused: true },
    }),
  );

/** Sends the create to the child (as `pair rented create --no-wait` does); settles when answered or cut. */
function sendCreate(w: SponsorChild): Promise<number | "cut"> {
  return statusOrCut(
    fetch(`${w.url}/pair/v1/rented/create`, {
      method: "POST",
      headers: { authorization: `Bearer ${w.adminToken()}`, "content-type": "application/json" },
      body: JSON.stringify({
        name: FRESH,
        provider: "huggingface-endpoint",
        credential: w.credentialRef,
        repo: "Qwen/Qwen3-0.6B",
        vendor: "aws",
        region: "us-east-1",
        instance_type: "nvidia-l4",
        instance_size: "x1",
        lifecycle: { idle_pause_min: 1 },
        budget: { unlimited: true },
      }),
    }),
  );
}

const openObligations = (state: HostingState) =>
  Object.values(state.obligations).filter((o) => o.state === "open");

/**
 * After any kill: each billing stretch of the fresh endpoint has exactly one open obligation, at most
 * one open obligation per resource, discharged ones carry evidence, the endpoint exists at most once,
 * the configured endpoint was not touched (still paused), and the token leaked nowhere.
 */
function expectInvariants(w: SponsorChild): void {
  const state = w.hosting(FRESH);
  const keyOf = (o: (typeof state.obligations)[string]) => o.key ?? state.deployments[o.deploymentId]?.key;
  for (const stretch of w.hf.meter.stretches().filter((s) => s.name === FRESH && s.endMs === undefined)) {
    const covering = openObligations(state).filter(
      (o) => keyOf(o)?.name === FRESH && keyOf(o)?.incarnation === stretch.createdAt,
    );
    expect(covering, `open obligation for billing ${FRESH}@${stretch.createdAt}`).toHaveLength(1);
  }
  const keys = openObligations(state).map((o) => JSON.stringify(keyOf(o) ?? o.deploymentId));
  expect(new Set(keys).size, "one open obligation per resource").toBe(keys.length);
  for (const o of Object.values(state.obligations).filter((x) => x.state === "discharged"))
    expect(o.evidence, `evidence of discharged ${o.deploymentId}`).toBeDefined();
  expect(w.hf.endpoints.list("alice").filter((e) => e.name === FRESH).length).toBeLessThanOrEqual(1);
  expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
  expect(w.tokenLeaks()).toEqual([]);
}

/** Create requests Hugging Face received (the emulator counts every control-plane request). */
const createsReceived = (w: SponsorChild) => w.hf.faults.arrived(CREATE);

describe(
  `managed endpoint create interrupted by SIGKILL (pair serve child, time x${SCALE})`,
  { timeout: 120_000 },
  () => {
    for (const when of ["before-answer", "on-release"] as const)
      it(
        when === "before-answer"
          ? "after Hugging Face created it, before PAIR got (and stored) the answer: the restart binds it to one obligation and idle pauses it"
          : "before Hugging Face carried it out, which it then does with the sponsor dead: the restart finds it, covers it once, and idle pauses it",
        async () => {
          const w = await world();
          await w.start();
          const createsBefore = createsReceived(w);
          w.hf.faults.holdNext(1, CREATE, when);
          const answered = sendCreate(w);
          await w.hf.faults.whenHeld();
          // Durable before it was sent: the declaration and its intent (the obligation) are in SQLite.
          const before = w.hosting(FRESH);
          expect(Object.keys(before.deployments)).toHaveLength(1);
          await w.kill();
          expect(await answered).toBe("cut");
          w.hf.faults.releaseHeld("apply"); // carried out (or already was) — nobody hears the answer
          await until("created", () => w.hf.endpoints.get("alice", FRESH)?.state === "pending", 2_000);
          expect(openObligations(w.hosting(FRESH))).toHaveLength(1);
          expectInvariants(w);

          await w.start();
          await until(
            "the restart binds the created endpoint",
            () => Object.values(w.hosting(FRESH).deployments).some((d) => d.key?.name === FRESH),
            ENFORCEMENT_BOUND_MS,
          );
          expect(Object.keys(w.hosting(FRESH).deployments)).toEqual(Object.keys(before.deployments));
          expectInvariants(w);
          // It runs (bills), then one idle minute (3 s real) later the restarted sponsor pauses it.
          await until("idle pause", () => w.hf.endpoints.get("alice", FRESH)?.state === "paused", 60_000);
          await until("discharged", () => openObligations(w.hosting(FRESH)).length === 0, 10_000);
          await w.kill();
          expectInvariants(w);
          expect(createsReceived(w) - createsBefore, "creates sent").toBe(1);
          expect(w.hf.meter.billedMinutes("alice", FRESH)).toBeGreaterThan(0);
          const minutes = w.hf.meter.billedMinutes("alice", FRESH);
          const meter = granulesCostMicroUsd(minutes, 60_000, L4_MICRO_USD_PER_HOUR);
          const ledger = w.spend(FRESH)?.totalMicroUsd ?? 0;
          expect(ledger, `ledger ≥ meter (${minutes} min)`).toBeGreaterThanOrEqual(meter);
          console.log(`crash create ${when}: meter ${minutes} min = ${meter} µUSD, ledger ${ledger} µUSD`);
        },
      );

    it("before Hugging Face carried it out, never to be: the restart closes the create on complete listings and creates nothing", async () => {
      const w = await world();
      await w.start();
      const createsBefore = createsReceived(w);
      w.hf.faults.holdNext(1, CREATE, "on-release");
      const answered = sendCreate(w);
      await w.hf.faults.whenHeld();
      await w.kill();
      expect(await answered).toBe("cut");
      expect(w.hf.faults.releaseHeld("drop")).toBe(1);
      expect(openObligations(w.hosting(FRESH))).toHaveLength(1); // unknown: it may exist
      expectInvariants(w);

      await w.start();
      await until(
        "closed on the evidence of a complete listing",
        () => openObligations(w.hosting(FRESH)).length === 0,
        ENFORCEMENT_BOUND_MS,
      );
      const [discharged] = Object.values(w.hosting(FRESH).obligations);
      expect(discharged?.evidence?.kind).toBe("absent-from-complete-listing");
      // Two more passes (10 s real each): still nothing is created.
      await new Promise((r) => setTimeout(r, 21_000));
      await w.kill();
      expectInvariants(w);
      expect(w.hf.endpoints.get("alice", FRESH)).toBeUndefined();
      expect(createsReceived(w) - createsBefore, "creates sent").toBe(1);
      expect(w.hf.meter.billedMinutes("alice", FRESH)).toBe(0);
    });
  },
);
