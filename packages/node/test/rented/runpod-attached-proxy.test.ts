// A Runpod pod attached by id (`endpoint: POD_ID`, no `pod:` section) reached through the configured
// `providers.runpod.proxy_url` template, end to end: a serving pod made in the Runpod emulator outside
// PAIR, a sponsor whose config points the template at the emulator's proxy (no in-process override),
// the node probed as running with the pod's model, and a chat through the sponsor answered by the pod.
// Before the fix the sponsor built `https://POD-8000.proxy.runpod.net/v1` whatever the template said.
// Needs the OS credential store: run through `bash scripts/test.sh`.
import { DEFAULT_TIMINGS, startRunpodEmulator, type RunpodEmulator } from "@pair/emulators";
import { HttpsRunpodTransport, RedactedString } from "@pair/runpod";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import type { RunningNode } from "../../src/node.js";
import { startSponsor } from "./rented-harness.js";
import { cleanupAfterEach } from "../support/eventually.js";
import { keyringCa } from "../support/keyring-worlds.js";

/** The rented node startSponsor configures. */
const NODE = "gpu-rent";
const SERVED = "qwen";

/** Made at run time: no token-shaped secret is committed. */
function secret(prefix: string): string {
  return `${prefix}${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
}

const keyring = keyringCa();
const defer = cleanupAfterEach();

/** A pod made outside PAIR (no `pair-` name, no PAIR env), serving vLLM with `vllmKey`; its id. */
async function servingPod(emu: RunpodEmulator, apiKey: string): Promise<string> {
  const transport = new HttpsRunpodTransport({
    baseUrl: emu.apiBaseUrl,
    apiKey: new RedactedString(apiKey, "test Runpod key"),
    extraCaPem: keyring.ca.certPem,
  });
  try {
    const pod = await transport.createPod({
      name: "my-own-qwen",
      image: "vllm/vllm-openai:v0.11.0",
      gpu: { id: "NVIDIA L40S", count: 1 },
      ports: ["8000/http"],
      env: { VLLM_API_KEY: "{{ RUNPOD_SECRET_vllm_key }}" },
      args: `--model Qwen/Qwen2.5-7B-Instruct --served-model-name ${SERVED} --port 8000`,
    });
    const t = DEFAULT_TIMINGS;
    emu.advance(t.provisionMs + t.imagePullMs + t.modelLoadMs);
    return pod.id;
  } finally {
    await transport.close();
  }
}

/** A sponsor whose one rented node is the pod by id, its proxy URL from `proxyTemplate`. */
async function sponsor(podId: string, proxyTemplate: string, emu: RunpodEmulator, vllmKey: string) {
  const started = await startSponsor({
    token: vllmKey,
    baseUrl: "",
    caPem: keyring.ca.certPem,
    target: ["    provider: runpod", `    endpoint: ${podId}`, "    budget: { unlimited: true }"],
    providers: ["providers:", `  runpod: { api: ${emu.apiBaseUrl}, proxy_url: "${proxyTemplate}" }`],
  });
  defer(() => started.close().catch(() => undefined));
  return started;
}

async function rentedRow(node: RunningNode): Promise<Record<string, unknown>> {
  const res = await request(`${node.url}/pair/v1/rented`, {
    headers: { authorization: `Bearer ${node.adminToken}` },
  });
  const rows = (await res.body.json()) as Record<string, unknown>[];
  return rows.find((r) => r["name"] === NODE) ?? {};
}

async function waitForState(node: RunningNode, state: string): Promise<Record<string, unknown>> {
  const started = Date.now();
  for (;;) {
    const row = await rentedRow(node);
    if (row["state"] === state) return row;
    if (Date.now() - started > 10_000) throw new Error(`not ${state} within 10 s: ${JSON.stringify(row)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function world(): Promise<{ emu: RunpodEmulator; podId: string; vllmKey: string }> {
  const leaf = await keyring.ca.issue();
  const apiKey = secret("rp_test_");
  const vllmKey = secret("sk-vllm-");
  const emu = await startRunpodEmulator({
    apiKey,
    tls: { key: leaf.keyPem, cert: leaf.certPem },
    secrets: { vllm_key: vllmKey },
  });
  defer(() => emu.close());
  return { emu, podId: await servingPod(emu, apiKey), vllmKey };
}

describe("a Runpod pod attached by id, through providers.runpod.proxy_url", () => {
  it("is probed and served through the configured template (the emulator's proxy)", async () => {
    const { emu, podId, vllmKey } = await world();
    const { node, log } = await sponsor(podId, `${emu.apiBaseUrl}/proxy/{pod_id}-{port}`, emu, vllmKey);
    const row = await waitForState(node, "running");
    expect(row["models"]).toEqual([SERVED]);
    const res = await request(`${node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: SERVED, messages: [{ role: "user", content: "hi" }], max_tokens: 3 }),
    });
    const text = await res.body.text();
    expect(res.statusCode, text).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ object: "chat.completion" });
    expect(log.join("\n")).not.toContain(vllmKey);
    expect(JSON.stringify(row)).not.toContain(emu.apiBaseUrl); // the view shows no URL
  });
});
