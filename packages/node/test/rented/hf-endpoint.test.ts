// A Hugging Face Inference Endpoint attached by `namespace/name`: the sponsor looks its URL and state up
// through the Endpoints API (the Hugging Face emulator over HTTPS), routes to its data plane with the
// token, and shows HF's states as the seed's table says.
import { startHuggingFaceEmulator, type HuggingFaceEmulator } from "@pair/emulators";
import type { HttpsEndpointsTransport } from "@pair/huggingface";
import { Agent, request } from "undici";
import { describe, expect, it } from "vitest";
import { runCli } from "../cli/cli-harness.js";
import { admin, joinWith, showPin, startTestNodeWith, type TestNode } from "../cluster/node-pair-harness.js";
import { startSponsor, type Sponsor } from "./rented-harness.js";
import { cleanupAfterEach, until } from "../support/eventually.js";
import { fakeHfToken } from "../support/fake-token.js";
import { keyringCa } from "../support/keyring-worlds.js";
import { aliceEndpoint, hfForAlice, QUICK_HF_TIMINGS, SPEC } from "../support/hf-alice.js";

const TOKEN = fakeHfToken();
const defer = cleanupAfterEach();
const keyring = keyringCa();

async function world(
  target: readonly string[] = [
    "    provider: huggingface-endpoint",
    "    endpoint: alice/qwen",
    "    lifecycle: { managed: false }",
  ],
  accessType: "private" | "public" = "private",
): Promise<{ hf: HuggingFaceEmulator; sponsor: Sponsor; api: HttpsEndpointsTransport }> {
  const { hf, api } = await hfForAlice(keyring.ca, TOKEN, { timings: QUICK_HF_TIMINGS });
  defer(() => hf.close());
  defer(() => api.close());
  if (accessType === "private") await aliceEndpoint({ hf, api });
  else {
    // PAIR's client refuses to create a public endpoint; someone else made this one.
    const res = await request(`${hf.endpointsApiUrl}/v2/endpoint/alice`, {
      method: "POST",
      dispatcher: new Agent({ connect: { ca: keyring.ca.certPem } }),
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({
        name: SPEC.name,
        type: "public",
        provider: { vendor: "aws", region: "us-east-1" },
        compute: {
          accelerator: "gpu",
          instanceType: "nvidia-l4",
          instanceSize: "x1",
          scaling: { minReplica: 0, maxReplica: 1 },
        },
        model: {
          repository: SPEC.repository,
          framework: "custom",
          image: { vLLM: { url: "vllm/vllm-openai:v0.23.0", port: 8000, healthRoute: "/health" } },
        },
      }),
    });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
  }
  const sponsor = await startSponsor({
    token: TOKEN,
    baseUrl: "unused",
    caPem: keyring.ca.certPem,
    target,
    providers: [
      "providers:",
      `  huggingface: { endpoints_api: ${hf.endpointsApiUrl}, hub_api: ${hf.hubApiUrl} }`,
    ],
  });
  defer(() => sponsor.close());
  return { hf, sponsor, api };
}

async function row(s: Sponsor): Promise<Record<string, unknown>> {
  const res = await fetch(`${s.node.url}/pair/v1/rented`, {
    headers: { authorization: `Bearer ${s.node.adminToken}` },
  });
  return ((await res.json()) as Record<string, unknown>[])[0] ?? {};
}

async function probe(s: Sponsor): Promise<void> {
  await fetch(`${s.node.url}/pair/v1/rented/probe`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.node.adminToken}`, "content-type": "application/json" },
    body: "{}",
  });
}

describe("a Hugging Face endpoint attached by name", () => {
  it("is looked up through the Endpoints API: starting, then running and served through the sponsor", async () => {
    const { hf, sponsor } = await world();
    await probe(sponsor);
    expect(await row(sponsor)).toMatchObject({
      provider: "huggingface-endpoint",
      state: "starting",
      models: ["Qwen/Qwen3-0.6B"],
      eligible: true,
    });
    hf.advance(2_500);
    // A probe under load may still see the state of a moment before: look until it moves on.
    await until(async () => {
      await probe(sponsor);
      return (await row(sponsor))["state"] === "running";
    });
    expect(await row(sponsor)).toMatchObject({
      state: "running",
      models: ["Qwen/Qwen3-0.6B"],
      eligible: true,
    });

    const res = await request(`${sponsor.node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "Qwen/Qwen3-0.6B", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-pair-served-by"]).toBe("gpu-rent");
    expect(res.headers["x-pair-off-lan"]).toBe("1");
    await res.body.json();
  });

  it("shows the GPU Hugging Face reports (instance type × size) in pair rented, pair nodes and on a peer", async () => {
    const { hf, sponsor, api } = await world();
    await probe(sponsor);
    expect((await row(sponsor))["gpu"]).toBe("L4 ×1");
    // Moved to four L4s: the label follows what HF reports, not what was first asked for.
    await api.updateEndpoint("alice", "qwen", { instanceType: "nvidia-l4", instanceSize: "x4" });
    hf.advance(2_500);
    await until(async () => {
      await probe(sponsor);
      return (await row(sponsor))["gpu"] === "L4 ×4";
    });
    const shower = {
      node: sponsor.node,
      clusterAddress: `127.0.0.1:${sponsor.node.cluster.port}`,
    } as TestNode;
    const nodes = (await admin(shower, "/pair/v1/nodes")).json as Record<string, unknown>[];
    expect(nodes.find((n) => n["name"] === "gpu-rent")).toMatchObject({ kind: "rented", gpu: "L4 ×4" });

    const laptop = await startTestNodeWith("laptop", { refreshMs: 150, timeoutMs: 400 });
    defer(() => laptop.close());
    expect((await joinWith(laptop, shower, await showPin(shower))).status).toBe(200);
    await until(async () => {
      const rows = (await admin(laptop, "/pair/v1/nodes")).json as Record<string, unknown>[];
      return rows.some((r) => r["name"] === "gpu-rent" && r["gpu"] === "L4 ×4");
    });
  });

  it("shows a paused endpoint as paused and refuses its model with rented_node_paused, naming the node", async () => {
    const { hf, sponsor, api } = await world();
    hf.advance(2_500);
    await api.pause("alice", "qwen");
    await probe(sponsor);
    expect(await row(sponsor)).toMatchObject({ state: "paused", eligible: false });
    const res = await request(`${sponsor.node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "Qwen/Qwen3-0.6B", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.statusCode).toBe(409);
    // No prompt retry wakes it: not a 503, and the OpenAI SDKs are told not to retry.
    expect(res.headers["x-should-retry"]).toBe("false");
    expect(res.headers["retry-after"]).toBeUndefined();
    expect(((await res.body.json()) as { error: { code: string; node: string } }).error).toMatchObject({
      code: "rented_node_paused",
      node: "gpu-rent",
    });
  });

  it("shows a failed deploy as failed with Hugging Face's message", async () => {
    const { hf, sponsor, api } = await world();
    await api.deleteEndpoint("alice", "qwen");
    hf.faults.failNextDeploy("CUDA out of memory while loading the model");
    await api.createEndpoint("alice", SPEC);
    hf.advance(2_500);
    await until(async () => {
      await probe(sponsor);
      return (await row(sponsor))["state"] === "failed";
    });
    expect(await row(sponsor)).toMatchObject({ eligible: false });
    expect(String((await row(sponsor))["reason"])).toMatch(/CUDA out of memory/);
  });
});

describe("a public Hugging Face endpoint", () => {
  it("is refused when managed (public_endpoint_refused), and only warned about when merely routed to", async () => {
    const managed = await world(
      ["    provider: huggingface-endpoint", "    endpoint: alice/qwen", "    budget: { usd_per_day: 1 }"],
      "public",
    );
    managed.hf.advance(2_500);
    await probe(managed.sponsor);
    expect(await row(managed.sponsor)).toMatchObject({ state: "public_endpoint_refused", eligible: false });
    const res = await request(`${managed.sponsor.node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "Qwen/Qwen3-0.6B", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.statusCode).toBe(403);
    expect(((await res.body.json()) as { error: { code: string } }).error.code).toBe(
      "public_endpoint_refused",
    );

    const routed = await world(undefined, "public");
    routed.hf.advance(2_500);
    await until(async () => {
      await probe(routed.sponsor);
      return (await row(routed.sponsor))["state"] === "running";
    });
    const shown = await row(routed.sponsor);
    expect(shown).toMatchObject({ state: "running", eligible: true });
    expect(shown["warnings"]).toEqual([expect.stringMatching(/without a credential/)]);
  });
});

describe("Hugging Face Inference Providers as a rented node", () => {
  it("shows its per-token price and records each request's cost as the router billed it", async () => {
    const leaf = await keyring.ca.issue();
    const hf = await startHuggingFaceEmulator({
      tls: { key: leaf.keyPem, cert: leaf.certPem },
      tokens: { [TOKEN]: { namespace: "alice" } },
    });
    defer(() => hf.close());
    const sponsor = await startSponsor({
      token: TOKEN,
      baseUrl: "unused",
      caPem: keyring.ca.certPem,
      target: ["    provider: huggingface-providers", `    base_url: ${hf.routerUrl}`],
    });
    defer(() => sponsor.close());
    await until(async () => (await row(sponsor))["state"] === "running");
    const nodes = (await (
      await fetch(`${sponsor.node.url}/pair/v1/nodes`, {
        headers: { authorization: `Bearer ${sponsor.node.adminToken}` },
      })
    ).json()) as Record<string, unknown>[];
    // The highest output price of what it serves: gpt-oss-120b at $0.60 per million tokens.
    expect(nodes.find((n) => n["name"] === "gpu-rent")).toMatchObject({ usd_per_mtok: 0.6 });

    for (const model of ["openai/gpt-oss-120b", "meta-llama/Llama-3.1-8B-Instruct"]) {
      const res = await request(`${sponsor.node.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "hello there" }] }),
      });
      expect(res.statusCode).toBe(200);
      await res.body.json();
    }
    const history = (await (
      await fetch(`${sponsor.node.url}/pair/v1/history`, {
        headers: { authorization: `Bearer ${sponsor.node.adminToken}` },
      })
    ).json()) as { est_cost_usd: number; tokens_in: number; tokens_out: number }[];
    expect(history).toHaveLength(2);
    for (const w of history) expect(w.est_cost_usd).toBeGreaterThan(0);
    const recorded = history.reduce((sum, w) => sum + Math.round(w.est_cost_usd * 1e6), 0);
    // What PAIR estimated is what the router charged (each rounded up to a micro-dollar at most).
    expect(Math.abs(recorded - hf.meter.routerMicroUsd("alice"))).toBeLessThanOrEqual(2);

    // A peer asking through the sponsor records an estimate from what the sponsor published (the
    // highest output price): never below what the sponsor recorded for the same request.
    await runCli(["rented", "share", "gpu-rent", "on", "--config", sponsor.configFile]);
    const laptop = await startTestNodeWith("laptop", { refreshMs: 150, timeoutMs: 400 });
    defer(() => laptop.close());
    const shower = {
      node: sponsor.node,
      clusterAddress: `127.0.0.1:${sponsor.node.cluster.port}`,
    } as TestNode;
    expect((await joinWith(laptop, shower, await showPin(shower))).status).toBe(200);
    await until(async () => {
      const rows = (await admin(laptop, "/pair/v1/nodes")).json as Record<string, unknown>[];
      return rows.some((r) => r["name"] === "gpu-rent" && r["shared"] === true);
    });
    const viaPeer = await request(`${laptop.node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "openai/gpt-oss-120b",
        messages: [{ role: "user", content: "hello there" }],
      }),
    });
    expect(viaPeer.statusCode).toBe(200);
    await viaPeer.body.json();
    await until(async () => ((await admin(laptop, "/pair/v1/history")).json as unknown[]).length === 1);
    const [peerRow] = (await admin(laptop, "/pair/v1/history")).json as { est_cost_usd: number }[];
    const [sponsorRow] = (await (
      await fetch(`${sponsor.node.url}/pair/v1/history`, {
        headers: { authorization: `Bearer ${sponsor.node.adminToken}` },
      })
    ).json()) as { est_cost_usd: number }[];
    expect(peerRow?.est_cost_usd).toBeGreaterThan(0);
    expect(peerRow?.est_cost_usd).toBeGreaterThanOrEqual(sponsorRow?.est_cost_usd ?? Infinity);
  });
});
