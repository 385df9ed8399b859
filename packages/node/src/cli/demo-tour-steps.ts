/**
 * The seed's validation steps 1–7 as the demo's tour runs them (seed 001, "Validation approach"):
 * attach and share, cold start, idle pause and wake, budget, sponsor exit, precedence, refusals.
 * Each step acts as a user would (a request to B's port, `pair rented …` on A, an edit of A's config
 * and a restart) and checks what the user would see; virtual time stands in for minutes and days.
 * Must not know: how the sandbox is built, how the output is framed (demo-tour.ts).
 */

import { Agent, request } from "undici";
import type { DemoCluster } from "./demo-cluster.js";
import {
  DEMO_COLD_START_S,
  DEMO_HF_ENDPOINT,
  DEMO_HF_MODEL,
  DEMO_RENTED_NODE,
  DEMO_SCALE_TO_ZERO_MIN,
} from "./demo-cluster-config.js";
import { demoCredentialRef } from "./demo-credentials.js";
import { adminCall, adminErrorCode, adminErrorMessage, chat, type ChatAnswer } from "./demo-http.js";
import {
  duration,
  hfState,
  lastJob,
  MINUTE_MS,
  nodeRow,
  rentedRow,
  untilNextDayMs,
  waitFor,
  whereSecretIs,
} from "./demo-tour-probes.js";
import type { TourPrinter, TourStepSpec } from "./demo-tour.js";

const NODE = DEMO_RENTED_NODE;
const MODEL = DEMO_HF_MODEL;
const ENDPOINT = `${DEMO_HF_ENDPOINT.namespace}/${DEMO_HF_ENDPOINT.name}`;
/** The seed's old header timeout that cut cold starts off. */
const OLD_TIMEOUT_MS = 120_000;
/** The tour's own curl line for a model, on a node's port. */
const curl = (url: string, stream = false) =>
  `curl${stream ? " -N" : ""} ${url}/v1/chat/completions -d '{"model": "${MODEL}"${stream ? ', "stream": true' : ""}, …}'`;

function answer(a: ChatAnswer): string {
  return a.status < 400
    ? `HTTP ${a.status}, served by ${a.servedBy ?? "?"}${a.events > 0 ? `, streamed in ${a.events} events` : ""}`
    : `HTTP ${a.status} ${a.errorCode ?? "?"}: ${a.errorMessage ?? a.text.slice(0, 200)}`;
}

/** B's view of the rented node, once `ok` holds (or after 5 s). */
function onB(c: DemoCluster, ok: (row: Record<string, unknown> | undefined) => boolean) {
  return waitFor(() => nodeRow(c.b.node), ok);
}

async function lifecycle(c: DemoCluster, out: TourPrinter, action: "pause" | "resume"): Promise<number> {
  out.does(`pair rented ${action} ${NODE}            # on A`);
  const done = await adminCall(c.a.node, "/pair/v1/rented/lifecycle", { name: NODE, action });
  return done.status;
}

/** Resume the endpoint and let virtual time run until Hugging Face reports it running. */
async function resumeRunning(c: DemoCluster, out: TourPrinter): Promise<string> {
  await lifecycle(c, out, "resume");
  for (let i = 0; i < 30 && hfState(c) !== "running"; i += 1) await c.advance(10_000);
  out.sees(`hf endpoints describe ${ENDPOINT} → ${hfState(c)}`);
  return hfState(c);
}

const attachAndShare: TourStepSpec = {
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

const coldStart: TourStepSpec = {
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

const idlePauseAndWake: TourStepSpec = {
  step: 3,
  title: "idle pause, then wake off (refused, naming the paused node) and wake on (resumed, served)",
  async run(c, out) {
    out.note("A's config: lifecycle { idle_pause_min: 5, wake_on_request: false }. Six idle minutes go by.");
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
      refused.status === 503 &&
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

const budget: TourStepSpec = {
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
      (refused.status === 503 &&
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

const sponsorExit: TourStepSpec = {
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

/** Two requests to `url`: a long one that holds A's only local slot, and one sent while it runs. */
async function whileLocalBusy(
  c: DemoCluster,
  url: string,
): Promise<{ first: ChatAnswer; second: ChatAnswer }> {
  const firstP = chat(url, MODEL, true);
  await waitFor(
    () => Promise.resolve(c.a.node.history.running().length),
    (n) => n > 0,
    2_000,
  );
  const secondP = c.drive(chat(url, MODEL));
  return { first: await firstP, second: await secondP };
}

const precedence: TourStepSpec = {
  step: 6,
  title: "precedence: the local copy serves by default; under overflow, with it busy, the rented node serves",
  async run(c, out) {
    await resumeRunning(c, out);
    await waitFor(
      async () => (await adminCall(c.a.node, "/pair/v1/models")).json,
      (rows) =>
        Array.isArray(rows) &&
        (rows as { model?: string; nodes?: unknown[] }[]).some(
          (r) => r.model === MODEL && r.nodes?.length === 2,
        ),
    );
    await onB(c, (r) => r?.["state"] === "running");
    const url = c.b.node.url;
    out.note(
      `Policy ${NODE}: when-no-local-node (the default). A long request holds A's local slot; a second one comes.`,
    );
    out.does(`${curl(url, true)} & ${curl(url)}   # on B`);
    const byDefault = await whileLocalBusy(c, url);
    out.sees(
      `first: ${answer(byDefault.first)}; second: ${answer(byDefault.second)} (it waited for the slot)`,
    );
    out.does(`pair rented policy ${NODE} overflow     # on A`);
    await adminCall(c.a.node, "/pair/v1/rented/policy", { name: NODE, use: "overflow" });
    await onB(c, (r) => r?.["policy"] === "overflow");
    out.does(`${curl(url, true)} & ${curl(url)}   # on B`);
    const overflow = await whileLocalBusy(c, url);
    out.sees(`first: ${answer(overflow.first)}; second: ${answer(overflow.second)}`);
    const local = c.a.name;
    const ok =
      byDefault.first.servedBy === local &&
      byDefault.second.servedBy === local &&
      overflow.first.servedBy === local &&
      overflow.second.servedBy === NODE;
    return {
      ok,
      outcome: {
        default: [byDefault.first.servedBy ?? null, byDefault.second.servedBy ?? null],
        overflow: [overflow.first.servedBy ?? null, overflow.second.servedBy ?? null],
      },
    };
  },
};

/** Someone else made this endpoint public on the account (PAIR itself never creates one). */
async function createPublicEndpoint(c: DemoCluster, name: string): Promise<void> {
  const agent = new Agent({ connect: { ca: c.caPem } });
  try {
    const res = await request(`${c.hf.endpointsApiUrl}/v2/endpoint/${DEMO_HF_ENDPOINT.namespace}`, {
      method: "POST",
      dispatcher: agent,
      headers: { authorization: `Bearer ${c.token.reveal()}`, "content-type": "application/json" },
      body: JSON.stringify({
        name,
        type: "public",
        provider: { vendor: "aws", region: "us-east-1" },
        compute: {
          accelerator: "gpu",
          instanceType: "nvidia-t4",
          instanceSize: "x1",
          scaling: { minReplica: 0, maxReplica: 1 },
        },
        model: {
          repository: "HuggingFaceTB/SmolLM2-360M-Instruct",
          framework: "pytorch",
          image: { huggingface: {} },
        },
      }),
    });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`creating the public endpoint: HTTP ${res.statusCode}`);
  } finally {
    await agent.close();
  }
}

const refusals: TourStepSpec = {
  step: 7,
  title: "refusals: an http:// URL off loopback, a public endpoint, a wrong token — each its own error",
  async run(c, out) {
    const hf = demoCredentialRef(c.credentials.hf);
    out.does(
      "pair rented attach gpu-plain --provider openai-compatible --base-url http://gpu.example.com/v1   # on A",
    );
    const plain = await adminCall(c.a.node, "/pair/v1/rented/attach", {
      name: "gpu-plain",
      provider: "openai-compatible",
      base_url: "http://gpu.example.com/v1",
      credential: hf,
    });
    const plainMessage = adminErrorMessage(plain);
    out.sees(`HTTP ${plain.status} ${adminErrorCode(plain) ?? "?"}: ${plainMessage}`);

    await createPublicEndpoint(c, "qwen-public");
    await c.advance(3 * MINUTE_MS);
    out.note(
      `Someone made ${DEMO_HF_ENDPOINT.namespace}/qwen-public PUBLIC on the account (${hfState(c, "qwen-public")}).`,
    );
    out.does(
      `pair rented attach gpu-public --provider huggingface-endpoint --endpoint ${DEMO_HF_ENDPOINT.namespace}/qwen-public   # on A`,
    );
    const pub = await adminCall(c.a.node, "/pair/v1/rented/attach", {
      name: "gpu-public",
      provider: "huggingface-endpoint",
      endpoint: `${DEMO_HF_ENDPOINT.namespace}/qwen-public`,
      credential: hf,
    });
    const pubRow = await rentedRow(c.a.node, "gpu-public");
    out.sees(
      `HTTP ${pub.status}; gpu-public: ${String(pubRow?.["state"])}, eligible ${String(pubRow?.["eligible"])} — ${String(pubRow?.["reason"])}`,
    );

    const wrong = demoCredentialRef(c.credentials.wrong);
    out.does(
      `pair rented attach gpu-wrong-token --provider huggingface-endpoint --endpoint ${ENDPOINT} --credential ${wrong}   # on A`,
    );
    const bad = await adminCall(c.a.node, "/pair/v1/rented/attach", {
      name: "gpu-wrong-token",
      provider: "huggingface-endpoint",
      endpoint: ENDPOINT,
      credential: wrong,
    });
    const badRow = await rentedRow(c.a.node, "gpu-wrong-token");
    out.sees(
      `HTTP ${bad.status}; gpu-wrong-token: ${String(badRow?.["state"])} — ${String(badRow?.["reason"])}`,
    );
    const ok =
      plain.status === 400 &&
      adminErrorCode(plain) === "insecure_url" &&
      pubRow?.["state"] === "public_endpoint_refused" &&
      badRow?.["state"] === "credential_rejected";
    return {
      ok,
      outcome: {
        http_url: { status: plain.status, code: adminErrorCode(plain) ?? null },
        public_endpoint: pubRow?.["state"] ?? null,
        wrong_token: badRow?.["state"] ?? null,
      },
    };
  },
};

export const TOUR_STEPS: readonly TourStepSpec[] = [
  attachAndShare,
  coldStart,
  idlePauseAndWake,
  budget,
  sponsorExit,
  precedence,
  refusals,
];
