/**
 * Tour steps 4–5 (seed 001, "Validation approach"): the daily budget cap pauses the endpoint and makes
 * the node ineligible with the reason; quitting the sponsor pauses the endpoint.
 * Must not know: how the sandbox is built, how the output is framed (tour.ts).
 */

import { DEMO_HF_ENDPOINT } from "./cluster-config.js";
import { chat } from "./http.js";
import { answer, curl, ENDPOINT, lifecycle, MODEL, NODE, onB, resumeRunning } from "./tour-actions.js";
import { hfState, MINUTE_MS, untilNextDayMs } from "./tour-probes.js";
import type { TourStepSpec } from "./tour.js";

export const budget: TourStepSpec = {
  step: 4,
  title: "budget: a $0.10/day cap pauses the endpoint and marks the node ineligible, with the reason",
  async run(c, out) {
    await lifecycle(c, out, "pause");
    await c.advance(untilNextDayMs(c), 6 * 3_600_000);
    out.note("A new (virtual) day: today's spend starts at $0.00.");
    out.does(
      "edit A's config: budget { usd_per_day: 0.10 }, idle_pause_min: 60, then restart pair serve on A",
    );
    await c.restartSponsor({ ...c.settings, usdPerDay: 0.1, idlePauseMin: 60, pauseOnSponsorExit: true });
    await resumeRunning(c, out);
    const billedBefore = c.hf.meter.billedMinutes(DEMO_HF_ENDPOINT.namespace, DEMO_HF_ENDPOINT.name);
    out.note("Twelve minutes go by (virtual) on the L4 at $0.80/h.");
    await c.advance(12 * MINUTE_MS);
    const billed = c.hf.meter.billedMinutes(DEMO_HF_ENDPOINT.namespace, DEMO_HF_ENDPOINT.name) - billedBefore;
    const view = c.a.node.managed.view(NODE);
    out.sees(
      `hf endpoints describe ${ENDPOINT} → ${hfState(c)}, after ${billed} billed minutes; ` +
        `spend today $${(view?.spend_usd?.today ?? 0).toFixed(4)}; paused by ${String(view?.paused_by ?? null)}`,
    );
    out.does("pair nodes   # on B");
    const row = await onB(c, (r) => r?.["eligible"] === false);
    out.sees(
      `${NODE}: ${String(row?.["state"])}, eligible ${String(row?.["eligible"])} — ${String(row?.["reason"])}`,
    );
    out.does(`${curl(c.b.node.url)}   # on B`);
    const refused = await chat(c.b.node.url, MODEL);
    out.sees(answer(refused));
    // On the sponsor the client gets budget_exceeded; through a peer, rented_node_ineligible with the reason.
    const refusedForBudget =
      (refused.status === 429 && refused.errorCode === "budget_exceeded") ||
      (refused.status === 409 &&
        refused.errorCode === "rented_node_ineligible" &&
        (refused.errorMessage ?? "").includes("budget"));
    const ok =
      hfState(c) === "paused" &&
      view?.paused_by === "budget-exceeded" &&
      (view.spend_usd?.today ?? 1) <= 0.1 &&
      row?.["eligible"] === false &&
      String(row["reason"]).includes("budget") &&
      refusedForBudget;
    return {
      ok,
      outcome: {
        state: hfState(c),
        billed_minutes: billed,
        spend_today_usd: view?.spend_usd?.today ?? null,
        paused_by: view?.paused_by ?? null,
        eligible_on_b: row?.["eligible"] ?? null,
        reason_on_b: row?.["reason"] ?? null,
        refused: { status: refused.status, code: refused.errorCode, message: refused.errorMessage },
      },
    };
  },
};

export const sponsorExit: TourStepSpec = {
  step: 5,
  title: "sponsor exit: quitting PAIR on A pauses the endpoint",
  async run(c, out) {
    await c.advance(untilNextDayMs(c), 6 * 3_600_000);
    out.note("Another (virtual) day: the cap allows spending again.");
    const running = await resumeRunning(c, out);
    out.does("Ctrl-C on A's pair serve");
    await c.stopSponsor();
    const after = hfState(c);
    out.sees(`hf endpoints describe ${ENDPOINT} → ${after}`);
    const logged = c.a.log.some((l) => l.includes("paused at sponsor exit"));
    out.sees(logged ? `A's log: ${NODE}: paused at sponsor exit` : "A's log says nothing of the pause");
    out.does(
      `start pair serve on A again, its config now with ${MODEL} on a local vLLM (max_concurrent 1) ` +
        "and the cap raised to $2.00/day",
    );
    await c.startSponsor({ ...c.settings, localCopy: true, usdPerDay: 2 });
    return { ok: running === "running" && after === "paused" && logged, outcome: { before: running, after } };
  },
};
