// servesModel: what a wake and the startup deadline ask of a managed endpoint's engine, against a
// loopback server answering as an OpenAI server, HF's Inference Toolkit, a loading engine and a
// proxy that refuses the token would.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redacted } from "@pair/cluster";
import { servesModel } from "../src/core/models-probe.js";

const answers: Record<string, { status: number; body: unknown }> = {
  "/vllm/v1/models": { status: 200, body: { object: "list", data: [{ id: "Qwen/Qwen3-0.6B" }] } },
  "/other/v1/models": { status: 200, body: { object: "list", data: [{ id: "/repository" }] } },
  "/empty/v1/models": { status: 200, body: { object: "list", data: [] } },
  "/loading/v1/models": { status: 503, body: { error: "loading" } },
  "/locked/v1/models": { status: 401, body: { error: "unauthorized" } },
};
let server: Server;
let base = "";
const seenAuth: string[] = [];
const dispatcher = new Agent();
const token = new Redacted("hf_secret_value_123", "test token");

beforeAll(async () => {
  server = createServer((req, res) => {
    seenAuth.push(req.headers.authorization ?? "");
    const answer = answers[req.url ?? ""] ?? { status: 404, body: { error: "Not Found" } };
    res.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.close();
  await dispatcher.close();
});

describe("servesModel", () => {
  const model = ["Qwen/Qwen3-0.6B"];

  it("serves when /v1/models lists the model, asked with the token", async () => {
    expect(await servesModel(dispatcher, `${base}/vllm/`, token, model)).toEqual({ serves: true });
    expect(seenAuth.at(-1)).toBe("Bearer hf_secret_value_123");
  });

  it("does not when the listing names another model, or none; any model passes when none is known", async () => {
    const other = await servesModel(dispatcher, `${base}/other`, token, model);
    expect(other).toEqual({ serves: false, why: "its /v1/models lists /repository, not Qwen/Qwen3-0.6B" });
    const empty = await servesModel(dispatcher, `${base}/empty`, token, model);
    expect(empty).toEqual({ serves: false, why: "its /v1/models lists no model, not Qwen/Qwen3-0.6B" });
    expect(await servesModel(dispatcher, `${base}/other`, token, [])).toEqual({ serves: true });
  });

  it("does not for the Toolkit's 404, a loading 503 or a refused token, and says which", async () => {
    const toolkit = await servesModel(dispatcher, `${base}/toolkit`, token, model);
    expect(toolkit).toEqual({ serves: false, why: "GET /v1/models answered 404" });
    const loading = await servesModel(dispatcher, `${base}/loading`, token, model);
    expect(loading).toEqual({
      serves: false,
      why: "its /v1/models answers 503 (loading or scaled to zero)",
      warming: true,
    });
    const locked = await servesModel(dispatcher, `${base}/locked`, token, model);
    expect(locked).toEqual({ serves: false, why: "its /v1/models refused the token (401)", refused: 401 });
    for (const answer of [toolkit, loading, locked])
      expect(JSON.stringify(answer)).not.toContain("hf_secret");
  });
});
