// API keys on the client port, end to end. Tests may bind only loopback, so a node "beyond loopback"
// is a node on 127.0.0.1 whose injected LoopbackPolicy calls its listen host and every caller
// remote: the same code path a LAN caller takes, with nothing bound outside this machine.
import { HOLDING_RUNTIME } from "@pair/cluster";
import { randomBytes } from "node:crypto";
import { Ollama } from "ollama";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createApiKey,
  parseApiKey,
  revokeApiKey,
  type ApiKeyStoreDeps,
  type LoopbackPolicy,
} from "../../src/auth/index.js";
import { startCluster, type Cluster, type EngineDecl } from "./node-harness.js";
import { chatBody, fetchChat } from "../support/chat.js";

const EVERYONE_REMOTE: LoopbackPolicy = { isLoopbackHost: () => false, isLoopbackPeer: () => false };
const deps: ApiKeyStoreDeps = { runtime: HOLDING_RUNTIME, randomBytes: (size) => randomBytes(size) };
const ENGINES: EngineDecl[] = [
  { name: "ollama-1", api: "ollama", models: ["llama3.2:latest"] },
  { name: "vllm-1", api: "openai", models: ["qwen-7b"] },
];

describe("a node listening beyond loopback", () => {
  let c: Cluster;
  let key = "";
  const log: string[] = [];
  beforeAll(async () => {
    c = await startCluster(
      ENGINES,
      { seams: { loopback: EVERYONE_REMOTE, log: (line) => log.push(line) } },
      { beforeStart: async (dataDir) => void (key = (await createApiKey(dataDir, "laptop", deps)).key) },
    );
  });
  afterAll(async () => c.close());

  const call = (path: string, init: RequestInit = {}) => fetch(`${c.node.url}${path}`, init);
  const lastRequester = () => c.node.history.history({ limit: 1 })[0]?.requester;
  const chatWith = (k?: string) =>
    call("/v1/chat/completions", {
      method: "POST",
      headers: k === undefined ? {} : { authorization: `Bearer ${k}` },
      body: chatBody({ model: "qwen-7b", stream: false }),
    });

  it("serves the OpenAI client that sends the key, and records the key's id as requester", async () => {
    const openai = new OpenAI({ baseURL: `${c.node.url}/v1`, apiKey: key, maxRetries: 0 });
    const r = await openai.chat.completions.create({
      model: "qwen-7b",
      messages: [{ role: "user", content: "hello" }],
    });
    expect(r.choices[0]?.message.content).toMatch(/hello/);
    expect(lastRequester()).toBe("laptop");
    const admin = await call("/pair/v1/history?limit=1", {
      headers: { authorization: `Bearer ${c.node.adminToken}` },
    });
    expect(((await admin.json()) as { requester: string }[])[0]?.requester).toBe("laptop");
  });

  it("serves the Ollama client that sends the key in its headers", async () => {
    const ollama = new Ollama({ host: c.node.url, headers: { Authorization: `Bearer ${key}` } });
    const r = await ollama.chat({ model: "llama3.2:latest", messages: [{ role: "user", content: "hey" }] });
    expect(r.message.content).toMatch(/hey/);
    expect(lastRequester()).toBe("laptop");
    expect((await ollama.list()).models.map((m) => m.name)).toEqual(["llama3.2:latest", "qwen-7b"]);
  });

  it.each([
    ["GET", "/v1/models", "openai"],
    ["POST", "/v1/chat/completions", "openai"],
    ["POST", "/v1/embeddings", "openai"],
    ["GET", "/metrics", "openai"],
    ["GET", "/", "openai"],
    ["GET", "/no/such/route", "openai"],
    ["GET", "/api/tags", "ollama"],
    ["GET", "/api/version", "ollama"],
    ["POST", "/api/chat", "ollama"],
    ["POST", "/api/show", "ollama"],
  ])("%s %s without a key: 401 in the %s dialect, nothing recorded", async (method, path, dialect) => {
    const before = c.node.history.history({ limit: 1000 }).length;
    const res = await call(
      path,
      method === "POST" ? { method, body: chatBody({ model: "qwen-7b", stream: false }) } : { method },
    );
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="pair"');
    expect(res.headers.get("connection")).toBe("close");
    const body = (await res.json()) as Record<string, unknown>;
    if (dialect === "openai")
      expect(body).toEqual({
        error: {
          message: expect.stringContaining("pair apikey create ID") as string,
          type: "authentication_error",
          param: null,
          code: "unauthorized",
        },
      });
    else
      expect(body).toEqual({
        error: expect.stringContaining("Authorization: Bearer") as string,
        code: "unauthorized",
      });
    expect(c.node.history.history({ limit: 1000 })).toHaveLength(before);
  });

  it("gives OpenAI clients with a placeholder or forged key an AuthenticationError", async () => {
    const forged = key.slice(0, -43) + Buffer.alloc(32, 9).toString("base64url");
    for (const apiKey of ["unused", forged, `pair_nobody_${Buffer.alloc(32).toString("base64url")}`]) {
      const openai = new OpenAI({ baseURL: `${c.node.url}/v1`, apiKey, maxRetries: 0 });
      const error = await openai.models.list().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
      expect((error as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe("unauthorized");
      expect(JSON.stringify(error)).not.toContain(parseApiKey(forged)!.secret);
    }
  });

  it("answers a refused Ollama request in Ollama's shape", async () => {
    const res = await call("/api/chat", {
      method: "POST",
      headers: { authorization: "Bearer pair_x_" + "A".repeat(43) },
      body: chatBody({ model: "llama3.2:latest", stream: false }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="pair", error="invalid_token"');
    expect(await res.json()).toEqual({
      error: expect.stringMatching(/not accepted/) as string,
      code: "unauthorized",
    });
  });

  it("refuses a revoked key from the next request on, and takes a new key without a restart", async () => {
    const { key: tablet } = await createApiKey(c.dataDir, "tablet", deps);
    expect((await chatWith(tablet)).status).toBe(200);
    expect(lastRequester()).toBe("tablet");
    await revokeApiKey(c.dataDir, "tablet", deps);
    expect((await chatWith(tablet)).status).toBe(401);
    expect((await chatWith(key)).status).toBe(200);
  });

  it("keeps the admin API behind its own token: an API key does not open it", async () => {
    const asAdmin = await call("/pair/v1/status", {
      headers: { authorization: `Bearer ${c.node.adminToken}` },
    });
    expect(asAdmin.status).toBe(200);
    const asClient = await call("/pair/v1/status", { headers: { authorization: `Bearer ${key}` } });
    expect(asClient.status).toBe(401);
  });

  it("counts refusals by reason, and never writes a key into its log, history or metrics", async () => {
    // Its own refusals, one of each, counted from before them: not the other tests' leftovers.
    const scrape = async () =>
      (await call("/metrics", { headers: { authorization: `Bearer ${key}` } })).text();
    const refusals = (text: string, reason: string) =>
      Number(
        new RegExp(`^pair_client_auth_refusals_total\\{reason="${reason}"\\} (\\d+)$`, "m").exec(text)?.[1] ??
          0,
      );
    const before = await scrape();
    const { key: phone } = await createApiKey(c.dataDir, "phone", deps);
    expect((await chatWith(phone)).status).toBe(200);
    await revokeApiKey(c.dataDir, "phone", deps);
    expect((await chatWith(phone)).status).toBe(401);
    expect((await chatWith()).status).toBe(401);
    const metrics = await scrape();
    expect(metrics).toMatch(/^pair_client_auth_refusals_total\{reason="missing"\} \d+$/m);
    expect(metrics).toMatch(/^pair_client_auth_refusals_total\{reason="revoked"\} \d+$/m);
    expect({
      missing: refusals(metrics, "missing") - refusals(before, "missing"),
      revoked: refusals(metrics, "revoked") - refusals(before, "revoked"),
    }).toEqual({ missing: 1, revoked: 1 });
    const history = JSON.stringify(c.node.history.history({ limit: 1000 }));
    for (const secret of [parseApiKey(key)!.secret, parseApiKey(phone)!.secret])
      for (const text of [log.join("\n"), history, metrics]) expect(text).not.toContain(secret);
    expect(log.join("\n")).toContain("callers from other machines need an API key (1 active");
  });
});

describe("a node on loopback (the real policy)", () => {
  let c: Cluster;
  beforeAll(async () => {
    c = await startCluster(ENGINES);
  });
  afterAll(async () => c.close());

  const chat = (authorization?: string) =>
    fetchChat(c.node.url, {
      model: "llama3.2:latest",
      stream: false,
      route: "/api/chat",
      headers: authorization === undefined ? {} : { authorization },
    });

  it("needs no key from this machine, and records the caller as local", async () => {
    expect((await chat()).status).toBe(200);
    expect(c.node.history.history({ limit: 1 })[0]?.requester).toBe("local");
    expect((await chat("Bearer unused")).status).toBe(200);
  });

  it("still names a local caller by a valid key, and refuses a PAIR key that fails", async () => {
    const { key } = await createApiKey(c.dataDir, "script", deps);
    expect((await chat(`Bearer ${key}`)).status).toBe(200);
    expect(c.node.history.history({ limit: 1 })[0]?.requester).toBe("script");
    await revokeApiKey(c.dataDir, "script", deps);
    const refused = await chat(`Bearer ${key}`);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string }).code).toBe("unauthorized");
  });
});
