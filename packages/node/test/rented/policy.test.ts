// Routing policy of rented nodes (issue 8): when-no-local-node (default), overflow, prefer, never —
// with a local engine and a rented node serving the same model on one sponsor.
import { startEngineEmulator, type EngineEmulator } from "@pair/emulators";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import type { WorkloadJson } from "../../src/history/workload-history.js";
import { runCli } from "../cli/cli-harness.js";
import { startRentedEndpoint, startSponsor, type Sponsor } from "./rented-harness.js";
import { cleanupAfterEach, until } from "../support/eventually.js";
import { fakeHfToken } from "../support/fake-token.js";
import { keyringCa } from "../support/keyring-worlds.js";

const TOKEN = fakeHfToken();
const MODEL = "llama3:70b";
const defer = cleanupAfterEach();
const keyring = keyringCa();

/** A sponsor with a local Ollama engine (max_concurrent 1) and a rented node, both serving MODEL. */
async function world(): Promise<{ sponsor: Sponsor; local: EngineEmulator }> {
  const local = await startEngineEmulator({
    api: "ollama",
    name: "local-ollama",
    models: [{ name: MODEL, maxTokens: 50 }],
    tokenDelayMs: 20,
  });
  defer(() => local.close());
  const rented = await startRentedEndpoint(keyring.ca, { apiKey: TOKEN, models: [MODEL] });
  defer(() => rented.engine.close());
  const sponsor = await startSponsor({
    token: TOKEN,
    baseUrl: rented.baseUrl,
    caPem: keyring.ca.certPem,
    engines: [
      "  - name: local-ollama",
      "    api: ollama",
      `    base_url: ${local.url}`,
      "    max_concurrent: 1",
      "    probe_interval_s: 0.2",
    ],
  });
  defer(() => sponsor.close());
  await until(async () => {
    const rows = (await admin(sponsor, "/pair/v1/models")) as { model: string; nodes: string[] }[];
    return rows.find((r) => r.model === MODEL)?.nodes.length === 2;
  });
  return { sponsor, local };
}

async function admin(s: Sponsor, path: string): Promise<unknown> {
  const res = await fetch(`${s.node.url}${path}`, {
    headers: { authorization: `Bearer ${s.node.adminToken}` },
  });
  return res.json();
}

async function servedBy(s: Sponsor): Promise<{ status: number; by: unknown }> {
  const res = await request(`${s.node.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, max_tokens: 2, messages: [{ role: "user", content: "hi" }] }),
  });
  const body = (await res.body.json()) as { error?: { code: string } };
  return { status: res.statusCode, by: res.headers["x-pair-served-by"] ?? body.error?.code };
}

async function policy(s: Sponsor, use: string): Promise<void> {
  expect((await runCli(["rented", "policy", "gpu-rent", use, "--config", s.configFile])).code).toBe(0);
}

describe("routing policy of a rented node", () => {
  it("when-no-local-node (default): the local engine serves; when it goes down, the rented node takes over", async () => {
    const { sponsor, local } = await world();
    expect(await servedBy(sponsor)).toEqual({ status: 200, by: "sponsor" });
    await local.close();
    expect(await servedBy(sponsor)).toEqual({ status: 200, by: "gpu-rent" });
    const [row] = (await admin(sponsor, "/pair/v1/history")) as WorkloadJson[];
    // Either the probe saw the engine go first, or the request found out and failed over.
    expect(row?.attempts.at(-1)).toEqual({ target: "rented node gpu-rent" });
  });

  it("overflow: the rented node takes requests only while every local engine is at max_concurrent", async () => {
    const { sponsor } = await world();
    await policy(sponsor, "overflow");
    expect(await servedBy(sponsor)).toEqual({ status: 200, by: "sponsor" });
    // Hold the local engine's only slot with a slow stream.
    const gone = new AbortController();
    const busy = await request(`${sponsor.node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: "user", content: "long" }] }),
      signal: gone.signal,
    });
    expect(busy.headers["x-pair-served-by"]).toBe("sponsor");
    expect(await servedBy(sponsor)).toEqual({ status: 200, by: "gpu-rent" });
    gone.abort();
    await busy.body.dump().catch(() => undefined);
    await until(async () => ((await admin(sponsor, "/pair/v1/jobs")) as unknown[]).length === 0);
    expect(await servedBy(sponsor)).toEqual({ status: 200, by: "sponsor" });
  });

  it("prefer: the rented node goes ahead of the local engine", async () => {
    const { sponsor } = await world();
    await policy(sponsor, "prefer");
    expect(await servedBy(sponsor)).toEqual({ status: 200, by: "gpu-rent" });
  });

  it("never: not routed to; alone with the model, requests get rented_node_ineligible with the reason", async () => {
    const { sponsor, local } = await world();
    await policy(sponsor, "never");
    expect(await servedBy(sponsor)).toEqual({ status: 200, by: "sponsor" });
    await local.close();
    await until(async () => {
      const rows = (await admin(sponsor, "/pair/v1/models")) as { model: string; nodes: string[] }[];
      return rows.find((r) => r.model === MODEL)?.nodes.length === 1;
    });
    const res = await request(`${sponsor.node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.statusCode).toBe(409);
    const body = (await res.body.json()) as { error: { code: string; node: string; message: string } };
    expect(body.error).toMatchObject({ code: "rented_node_ineligible", node: "gpu-rent" });
    expect(body.error.message).toMatch(/policy is never/);
  });
});
