/**
 * Tour steps 6–7 (seed 001, "Validation approach"): precedence between A's local copy and the rented
 * node (default policy, then overflow with the local slot busy), and the three refusals of an attach
 * (http:// off loopback, a public endpoint, a wrong token).
 * Must not know: how the sandbox is built, how the output is framed (tour.ts).
 */

import { vllmImage } from "@pair/huggingface";
import { Agent, request } from "undici";
import type { DemoCluster } from "./cluster.js";
import { DEMO_HF_ENDPOINT } from "./cluster-config.js";
import { demoCredentialRef } from "./credentials.js";
import { adminCall, adminErrorCode, adminErrorMessage, chat, type ChatAnswer } from "./http.js";
import { answer, curl, ENDPOINT, MODEL, NODE, onB, resumeRunning } from "./tour-actions.js";
import { hfState, MINUTE_MS, rentedRow, waitFor } from "./tour-probes.js";
import type { TourStepSpec } from "./tour.js";

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

export const precedence: TourStepSpec = {
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
          // An engine that serves /v1 (HF's default Toolkit image does not).
          framework: "custom",
          image: vllmImage(),
        },
      }),
    });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`creating the public endpoint: HTTP ${res.statusCode}`);
  } finally {
    await agent.close();
  }
}

export const refusals: TourStepSpec = {
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
      `pair rented attach gpu-public --provider huggingface-endpoint --endpoint ${DEMO_HF_ENDPOINT.namespace}/qwen-public --usd-per-day 1   # on A`,
    );
    const pub = await adminCall(c.a.node, "/pair/v1/rented/attach", {
      name: "gpu-public",
      provider: "huggingface-endpoint",
      endpoint: `${DEMO_HF_ENDPOINT.namespace}/qwen-public`,
      credential: hf,
      budget: { usd_per_day: 1 },
    });
    const pubRow = await rentedRow(c.a.node, "gpu-public");
    out.sees(
      `HTTP ${pub.status}; gpu-public: ${String(pubRow?.["state"])}, eligible ${String(pubRow?.["eligible"])} — ${String(pubRow?.["reason"])}`,
    );

    const wrong = demoCredentialRef(c.credentials.wrong);
    out.does(
      `pair rented attach gpu-wrong-token --provider huggingface-endpoint --endpoint ${ENDPOINT} --credential ${wrong} --usd-per-day 1   # on A`,
    );
    const bad = await adminCall(c.a.node, "/pair/v1/rented/attach", {
      name: "gpu-wrong-token",
      provider: "huggingface-endpoint",
      endpoint: ENDPOINT,
      credential: wrong,
      budget: { usd_per_day: 1 },
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
