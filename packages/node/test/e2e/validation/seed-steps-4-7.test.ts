// The seed's validation plan (seed 001, "Validation approach"), steps 4–7, automated: two nodes on
// loopback (A sponsors a managed Hugging Face endpoint on the emulator over HTTPS, B is its paired
// peer), the real keyring. Run through `bash scripts/test.sh`.
import { Agent, request } from "undici";
import { describe, expect, it } from "vitest";
import { runCli } from "../../cli/cli-harness.js";
import { until } from "../../support/eventually.js";
import { keyringWorlds } from "../../support/keyring-worlds.js";
import {
  MIN,
  MODEL,
  nodeRow,
  RENTED,
  SPEC,
  TOKEN,
  validationWorld,
  type ValidationWorld,
  type WorldOptions,
} from "./validation-world.js";
import { chatError, postChat } from "../../support/chat.js";

const worlds = keyringWorlds<ValidationWorld>();

async function world(options: WorldOptions = {}): Promise<ValidationWorld> {
  return worlds.add(await validationWorld(worlds.ca, options));
}

const chat = (url: string, model = MODEL, stream = false, signal?: AbortSignal) =>
  postChat(url, { model, stream, maxTokens: stream ? 50 : 4, signal });

async function nodesJson(configFile: string): Promise<Record<string, unknown>[]> {
  const out = await runCli(["nodes", "--json", "--config", configFile]);
  expect(out.code).toBe(0);
  return JSON.parse(out.stdout) as Record<string, unknown>[];
}

describe("seed validation, steps 4–7", () => {
  it("seed step 4: budget — a $0.10 cap pauses the endpoint after about 7½ minutes on the L4 and marks it ineligible with the reason (budget_exceeded, in pair nodes --json)", async () => {
    const w = await world({
      rentedLines: ["    budget: { usd_per_day: 0.1 }", "    share_with_cluster: true"],
    });
    // Minutes HF billed before A adopted the running endpoint: not A's to count.
    const before = w.hf.meter.billedMinutes("alice", "qwen");
    await w.advance(6 * MIN);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("running");
    await w.advance(6 * MIN);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
    // $0.80/h: 7 minutes are $0.093; the 8th would cross $0.10 and is not started.
    expect(w.hf.meter.billedMinutes("alice", "qwen") - before).toBeLessThanOrEqual(8);
    const view = w.a.managed.view(RENTED);
    expect(view).toMatchObject({ paused_by: "budget-exceeded", budget_exceeded: true });
    expect(view?.spend_usd?.today).toBeLessThanOrEqual(0.1);
    expect(view?.spend_usd?.today).toBeGreaterThan(0.09);
    const row = (await nodesJson(w.aConfigFile)).find((r) => r["name"] === RENTED);
    expect(row).toMatchObject({ eligible: false });
    expect(String(row?.["reason"])).toMatch(/^budget exceeded/);
    const refused = await chatError(await chat(w.a.url));
    expect(refused).toMatchObject({ status: 429, code: "budget_exceeded", node: RENTED });
    // B sees it ineligible too, with the reason.
    await until(async () => (await nodeRow(w.b.node))?.["eligible"] === false);
    expect(String((await nodeRow(w.b.node))?.["reason"])).toMatch(/^budget exceeded/);
  });

  it("seed step 5: sponsor exit — quitting PAIR on A leaves the endpoint paused on Hugging Face", async () => {
    const w = await world();
    await w.advance(2 * MIN);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("running");
    await w.quitA();
    expect((await w.api.getEndpoint("alice", "qwen")).state).toBe("paused");
    expect(w.aLog.some((l) => l.includes("paused at sponsor exit"))).toBe(true);
  });

  it("seed step 6: precedence — the same model locally and rented: default policy → the local node serves; overflow with the local owner busy → the rented node serves", async () => {
    // The local Ollama calls it by its tag, Hugging Face by its repo id: one model through model_aliases.
    const w = await world({
      localModels: ["qwen3:0.6b"],
      topLevel: ["model_aliases:", `  qwen3: ["qwen3:0.6b", ${MODEL}]`],
    });
    await until(async () => (await nodeRow(w.a))?.["state"] === "running");
    await until(async () => (await nodeRow(w.a, "node-a"))?.["models"] !== undefined);
    for (const model of [MODEL, "qwen3"]) {
      const res = await chat(w.a.url, model);
      expect({ model, by: res.headers["x-pair-served-by"] }).toEqual({ model, by: "node-a" });
      expect(((await res.body.json()) as { model: string }).model).toBe(model);
    }

    expect((await runCli(["rented", "policy", RENTED, "overflow", "--config", w.aConfigFile])).code).toBe(0);
    const idle = await chat(w.a.url);
    expect(idle.headers["x-pair-served-by"]).toBe("node-a");
    await idle.body.dump();
    // The local owner busy: its only slot (max_concurrent 1) held by a long stream.
    const gone = new AbortController();
    const busy = await chat(w.a.url, MODEL, true, gone.signal);
    expect(busy.headers["x-pair-served-by"]).toBe("node-a");
    const over = await chat(w.a.url);
    expect(over.statusCode).toBe(200);
    expect(over.headers["x-pair-served-by"]).toBe(RENTED);
    expect(((await over.body.json()) as { model: string }).model).toBe(MODEL);
    gone.abort();
    await busy.body.dump().catch(() => undefined);
  });

  it("seed step 7: refusals — an http:// URL to a non-loopback host (insecure_url), a public endpoint (public_endpoint_refused), a wrong token (credential_rejected)", async () => {
    const w = await world({
      // A public endpoint someone else made (PAIR's own client refuses to create one).
      beforeStart: async (hf) => {
        const agent = new Agent({ connect: { ca: worlds.ca.certPem } });
        const res = await request(`${hf.endpointsApiUrl}/v2/endpoint/alice`, {
          method: "POST",
          dispatcher: agent,
          headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
          body: JSON.stringify({
            name: "open",
            type: "public",
            provider: { vendor: "aws", region: "us-east-1" },
            compute: {
              accelerator: "gpu",
              instanceType: SPEC.instanceType,
              instanceSize: "x1",
              scaling: { minReplica: 0, maxReplica: 1 },
            },
            model: {
              repository: "Qwen/Qwen3-1.7B",
              framework: "custom",
              image: { vLLM: { url: "vllm/vllm-openai:v0.23.0", port: 8000, healthRoute: "/health" } },
            },
          }),
        });
        expect(res.statusCode).toBe(200);
        await res.body.dump();
        await agent.close();
        hf.advance(2 * MIN);
      },
      rentedLines: ["    lifecycle: { exit_timeout_s: 1 }"],
      moreRented: [
        "  - name: gpu-public",
        "    provider: huggingface-endpoint",
        "    endpoint: alice/open",
        "    credential: os-credential-store:CREDENTIAL",
        "    budget: { usd_per_day: 1 }",
      ],
    });

    // http:// to a host that is not loopback.
    const insecure = await runCli([
      "rented",
      "attach",
      "gpu-plain",
      "--provider",
      "openai-compatible",
      "--base-url",
      "http://gpu.example.com/v1",
      "--config",
      w.aConfigFile,
    ]);
    expect(insecure.code).toBe(1);
    expect(insecure.stderr).toMatch(/insecure_url/);

    // A public endpoint: refused for management, its model refused with the reason.
    await until(async () => (await nodeRow(w.a, "gpu-public"))?.["state"] === "public_endpoint_refused");
    const open = await chatError(await chat(w.a.url, "Qwen/Qwen3-1.7B"));
    expect(open).toMatchObject({ status: 403, code: "public_endpoint_refused", node: "gpu-public" });

    // A wrong token: Hugging Face no longer accepts the one A holds.
    await until(async () => (await nodeRow(w.a))?.["state"] === "running");
    w.hf.tokens.remove(TOKEN);
    const rejected = await chatError(await chat(w.a.url));
    expect(rejected).toMatchObject({ code: "credential_rejected", node: RENTED });
    expect(rejected.message).toMatch(/pair credential set/);
    await until(async () => (await nodeRow(w.a))?.["state"] === "credential_rejected");
    expect(JSON.stringify(await nodesJson(w.aConfigFile))).not.toContain(TOKEN);
    w.hf.tokens.add(TOKEN, { namespace: "alice" }); // so A's exit pause goes through at cleanup
  });
});
