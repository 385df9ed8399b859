/**
 * Tour steps 1–3 (seed 001, "Validation approach"): attach and share (refused while unshared, then
 * served and streamed from B, in Jobs on both nodes, no token on B), cold start (held by Hugging Face
 * past the old 120 s), idle pause then wake off and on.
 * Must not know: how the sandbox is built, how the output is framed (tour.ts).
 */

import { DEMO_COLD_START_S, DEMO_HF_ENDPOINT, DEMO_SCALE_TO_ZERO_MIN } from "./cluster-config.js";
import { adminCall, chat } from "./http.js";
import { answer, curl, ENDPOINT, MODEL, NODE, OLD_TIMEOUT_MS, onB } from "./tour-actions.js";
import { duration, hfState, lastJob, MINUTE_MS, whereSecretIs } from "./tour-probes.js";
import type { TourStepSpec } from "./tour.js";

export const attachAndShare: TourStepSpec = {
  step: 1,
  title: "attach and share: refused while A keeps it to itself, served from B once shared",
  async run(c, out) {
    out.note(
      `A sponsors ${NODE}: the private Hugging Face endpoint ${ENDPOINT} (L4, $0.80/h), serving ${MODEL}.`,
    );
    await c.advance(2 * MINUTE_MS);
    out.sees(
      `hf endpoints describe ${ENDPOINT} → ${hfState(c)} (pending → initializing → running, 1 min 30 s)`,
    );
    await onB(c, (r) => r?.["state"] === "running");
    out.does(`${curl(c.b.node.url)}   # on B`);
    const refused = await chat(c.b.node.url, MODEL);
    out.sees(answer(refused));
    out.does(`pair rented share ${NODE} on          # on A`);
    await adminCall(c.a.node, "/pair/v1/rented/share", { name: NODE, share: true });
    await onB(c, (r) => r?.["shared"] === true);
    out.does(`${curl(c.b.node.url, true)}   # on B`);
    const served = await chat(c.b.node.url, MODEL, true);
    out.sees(answer(served));
    out.does("pair history   # on A, then on B");
    const jobA = await lastJob(c.a.node, NODE);
    const jobB = await lastJob(c.b.node, NODE);
    for (const [who, job] of [
      ["A", jobA],
      ["B", jobB],
    ] as const)
      out.sees(
        job === undefined
          ? `${who}: no job served by ${NODE}`
          : `${who}: ${String(job["model"])} from ${String(job["origin_node"])}, served by ${String(job["serving_node"])} ` +
              `(sponsor ${String(job["sponsor"])}, off-LAN), ${String(job["status"])}`,
      );
    out.does(`grep -r "$HF_TOKEN" ${c.b.dataDir} <B's log>`);
    const leaks = await whereSecretIs(c.b.dataDir, c.b.log, c.token.reveal());
    out.sees(leaks.length === 0 ? "nothing: B never held the token" : `found in ${leaks.join(", ")}`);
    const ok =
      refused.status === 403 &&
      refused.errorCode === "rented_node_not_shared" &&
      (refused.errorMessage ?? "").includes(NODE) &&
      served.status === 200 &&
      served.servedBy === NODE &&
      served.events > 1 &&
      jobA?.["status"] === "completed" &&
      jobB?.["status"] === "completed" &&
      leaks.length === 0;
    return {
      ok,
      outcome: {
        refused: { status: refused.status, code: refused.errorCode, message: refused.errorMessage },
        served: { status: served.status, served_by: served.servedBy, events: served.events },
        job_on_a: jobA?.["serving_node"] ?? null,
        job_on_b: jobB?.["serving_node"] ?? null,
        token_found_on_b: leaks,
      },
    };
  },
};

export const coldStart: TourStepSpec = {
  step: 2,
  title: "cold start: served after Hugging Face scaled the endpoint to zero, not cut off at 120 s",
  async run(c, out) {
    out.note(
      `Hugging Face scales an idle endpoint to zero after its scale-to-zero timeout (${DEMO_SCALE_TO_ZERO_MIN} min); ` +
        "the demo asks it to at once, as the account owner could:",
    );
    out.does(`hf endpoints scale-to-zero ${ENDPOINT}`);
    await c.hfApi.scaleToZero(DEMO_HF_ENDPOINT.namespace, DEMO_HF_ENDPOINT.name);
    const before = hfState(c);
    out.sees(`hf endpoints describe ${ENDPOINT} → ${before}`);
    out.does(`${curl(c.b.node.url)}   # on B`);
    const startMs = c.hf.nowMs();
    let held = 0;
    const served = await c.drive(chat(c.b.node.url, MODEL), {
      each: () => void (held = Math.max(held, c.hf.endpoints.heldRequests())),
    });
    const waitedMs = c.hf.nowMs() - startMs;
    out.sees(`${answer(served)}, after ${duration(waitedMs)} of cold start (virtual)`);
    out.sees(
      `Hugging Face held the request for a replica (X-Scale-Up-Timeout: ${DEMO_COLD_START_S}), ` +
        `${held > 0 ? "as PAIR asked" : "NOT seen"}`,
    );
    const ok =
      before === "scaledToZero" &&
      served.status === 200 &&
      served.servedBy === NODE &&
      waitedMs > OLD_TIMEOUT_MS &&
      held > 0;
    return {
      ok,
      outcome: { before, status: served.status, served_by: served.servedBy, cold_start_ms: waitedMs, held },
    };
  },
};

export const idlePauseAndWake: TourStepSpec = {
  step: 3,
  title: "idle pause, then wake off (refused, naming the paused node) and wake on (resumed, served)",
  async run(c, out) {
    out.note(
      "A's config: lifecycle { idle_pause_min: 5, wake_on_request: false }, budget { usd_per_day: 2 }. " +
        "Six idle minutes go by.",
    );
    await c.advance(6 * MINUTE_MS);
    const paused = hfState(c);
    const pausedBy = c.a.node.managed.view(NODE)?.paused_by ?? null;
    out.sees(`hf endpoints describe ${ENDPOINT} → ${paused}; pair nodes on A: paused by ${String(pausedBy)}`);
    await onB(c, (r) => r?.["state"] === "paused");
    out.does(`${curl(c.b.node.url)}   # on B`);
    const refused = await chat(c.b.node.url, MODEL);
    out.sees(answer(refused));
    out.does("edit A's config: wake_on_request: true, then restart pair serve on A");
    await c.restartSponsor({ ...c.settings, wakeOnRequest: true });
    await onB(c, (r) => r?.["state"] === "paused" && r["eligible"] === true);
    out.does(`${curl(c.b.node.url)}   # on B`);
    const startMs = c.hf.nowMs();
    const woken = await c.drive(chat(c.b.node.url, MODEL));
    out.sees(`${answer(woken)}, after A resumed the endpoint (${duration(c.hf.nowMs() - startMs)} virtual)`);
    out.sees(`hf endpoints describe ${ENDPOINT} → ${hfState(c)}`);
    const ok =
      paused === "paused" &&
      pausedBy === "idle" &&
      refused.status === 409 &&
      // On the sponsor: rented_node_paused; through a peer: rented_node_ineligible saying "paused".
      (refused.errorCode === "rented_node_paused" ||
        (refused.errorCode === "rented_node_ineligible" &&
          (refused.errorMessage ?? "").includes("paused"))) &&
      (refused.errorMessage ?? "").includes(NODE) &&
      woken.status === 200 &&
      woken.servedBy === NODE &&
      hfState(c) === "running";
    return {
      ok,
      outcome: {
        paused_state: paused,
        paused_by: pausedBy,
        wake_off: { status: refused.status, code: refused.errorCode, message: refused.errorMessage },
        wake_on: { status: woken.status, served_by: woken.servedBy },
      },
    };
  },
};
