// The client port's front door against a real node over loopback, as a web page (or an attacker's
// script) would reach it: a DNS-rebinding Host, a cross-site no-cors POST, preflights, origins and
// hosts the config and PAIR_ORIGINS allow, JSON nested to overflow the stack, a body that stops
// arriving, a flood of connections — and the clients that must keep working unchanged.
import { connect, type Socket } from "node:net";
import { Ollama } from "ollama";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { rawHttp } from "../support/raw-http.js";
import { until } from "../support/eventually.js";
import { startCluster, type Cluster } from "./node-harness.js";

const CHAT = JSON.stringify({ model: "qwen-7b", messages: [{ role: "user", content: "hi" }], max_tokens: 3 });
const GENERATE = JSON.stringify({ model: "llama3.2:latest", prompt: "hi", stream: false });
const EVIL = "https://evil.example";

let c: Cluster;
beforeAll(async () => {
  c = await startCluster(
    [
      { name: "vllm-1", api: "openai", models: ["qwen-7b"] },
      { name: "ollama-1", api: "ollama", models: ["llama3.2:latest"] },
    ],
    { seams: { hostName: "ada-laptop", env: {} } },
  );
});
afterAll(async () => c.close());

const engineRequests = () => [...c.engines.values()].reduce((n, e) => n + e.stats().requests, 0);
const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  rawHttp(`${c.node.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
const codeOf = (json: unknown): unknown =>
  (json as { code?: unknown }).code ?? (json as { error?: { code?: unknown } }).error?.code;

describe("DNS rebinding: a Host that is not this machine's", () => {
  it("is refused with host_refused on every route, in the route's dialect, and no engine hears of it", async () => {
    const host = `evil.example:${c.node.port}`;
    const before = engineRequests();
    const admin = { authorization: `Bearer ${c.node.adminToken}` };
    const answers = {
      chat: await post("/v1/chat/completions", CHAT, { host }),
      generate: await post("/api/generate", GENERATE, { host }),
      metrics: await rawHttp(`${c.node.url}/metrics`, { headers: { host } }),
      ui: await rawHttp(`${c.node.url}/ui/`, { headers: { host } }),
      status: await rawHttp(`${c.node.url}/pair/v1/status`, { headers: { host, ...admin } }),
    };
    for (const [route, a] of Object.entries(answers)) {
      expect([route, a.status]).toEqual([route, 403]);
      expect([route, codeOf(a.json)]).toEqual([route, "host_refused"]);
      expect(a.text).not.toContain("PAIR is running");
    }
    // Ollama's envelope on /api/…, OpenAI's elsewhere.
    expect(answers.generate.json).toMatchObject({
      error: expect.stringContaining("allowed_hosts") as string,
    });
    expect(answers.chat.json).toMatchObject({ error: { type: "permission_error", code: "host_refused" } });
    expect(answers.metrics.text).not.toContain("pair_requests_total");
    expect(engineRequests()).toBe(before);
    // The same routes under this machine's own names work.
    for (const name of ["localhost", "127.0.0.1", "ada-laptop", "ada-laptop.local", "app.localhost"])
      expect(
        (await rawHttp(`${c.node.url}/metrics`, { headers: { host: `${name}:${c.node.port}` } })).status,
      ).toBe(200);
    const metrics = await rawHttp(`${c.node.url}/metrics`);
    expect(metrics.text).toMatch(/pair_front_door_refusals_total\{code="host_refused"\} 5/);
  });
});

describe("a cross-site page", () => {
  const crossSite = { origin: EVIL, "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors" };

  it("cannot get a no-cors text/plain POST served: origin_refused, nothing read, no engine, no workload", async () => {
    const before = engineRequests();
    const finished = c.node.history.history().length;
    for (const [path, body] of [
      ["/v1/chat/completions", CHAT],
      ["/api/generate", GENERATE],
    ] as const) {
      const a = await post(path, body, { ...crossSite, "content-type": "text/plain;charset=UTF-8" });
      expect([path, a.status, codeOf(a.json)]).toEqual([path, 403, "origin_refused"]);
      expect(a.headers["access-control-allow-origin"]).toBeUndefined();
      expect(a.headers["connection"]).toBe("close");
    }
    expect(engineRequests()).toBe(before);
    expect(c.node.history.running()).toEqual([]);
    expect(c.node.history.history()).toHaveLength(finished);
  });

  it("is refused by Sec-Fetch-Site: cross-site even without an Origin (an <img>, a no-cors GET)", async () => {
    const a = await rawHttp(`${c.node.url}/metrics`, { headers: { "sec-fetch-site": "cross-site" } });
    expect([a.status, codeOf(a.json)]).toEqual([403, "origin_refused"]);
    const b = await post("/api/generate", GENERATE, { "sec-fetch-site": "cross-site" });
    expect([b.status, codeOf(b.json)]).toEqual([403, "origin_refused"]);
  });

  it("gets its preflight refused", async () => {
    const a = await rawHttp(`${c.node.url}/v1/chat/completions`, {
      method: "OPTIONS",
      headers: {
        origin: EVIL,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
    expect([a.status, codeOf(a.json)]).toEqual([403, "origin_refused"]);
    expect(a.headers["access-control-allow-origin"]).toBeUndefined();
  });
});

describe("a browser app on localhost (an allowed origin)", () => {
  const origin = "http://localhost:5173";

  it("gets its preflight answered with CORS headers", async () => {
    const a = await rawHttp(`${c.node.url}/v1/chat/completions`, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type, x-stainless-os",
      },
    });
    expect(a.status).toBe(204);
    expect(a.headers).toMatchObject({
      "access-control-allow-origin": origin,
      "access-control-allow-methods": expect.stringContaining("POST") as string,
      "access-control-allow-headers": "authorization, content-type, x-stainless-os",
      vary: expect.stringContaining("Origin") as string,
    });
    expect(Number(a.headers["access-control-max-age"])).toBeGreaterThan(0);
  });

  it("gets Access-Control-Allow-Origin on replies, streamed ones and errors included", async () => {
    const headers = { origin, "sec-fetch-site": "same-site" };
    const plain = await post("/v1/chat/completions", CHAT, headers);
    expect(plain.status).toBe(200);
    expect(plain.headers["access-control-allow-origin"]).toBe(origin);
    expect(plain.headers["access-control-expose-headers"]).toContain("x-pair-served-by");
    const streamed = await post(
      "/api/chat",
      JSON.stringify({ model: "llama3.2:latest", messages: [{ role: "user", content: "hi" }] }),
      headers,
    );
    expect(streamed.status).toBe(200);
    expect(streamed.headers["access-control-allow-origin"]).toBe(origin);
    expect(streamed.text.trim().split("\n").length).toBeGreaterThan(1);
    const missing = await post("/v1/chat/completions", CHAT.replace("qwen-7b", "nope"), headers);
    expect([missing.status, codeOf(missing.json)]).toEqual([404, "model_not_found"]);
    expect(missing.headers["access-control-allow-origin"]).toBe(origin);
  });
});

describe("clients without an Origin are unchanged", () => {
  it("the official openai and ollama clients", async () => {
    const openai = new OpenAI({ baseURL: `${c.node.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const r = await openai.chat.completions.create({
      model: "qwen-7b",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(r.choices[0]?.message.content).toBeTruthy();
    const g = await new Ollama({ host: c.node.url }).generate({ model: "llama3.2:latest", prompt: "hi" });
    expect(g.response).toBeTruthy();
  });

  it("curl -d with no content type, or curl's form type, as Ollama's docs show", async () => {
    const none = await rawHttp(`${c.node.url}/api/generate`, { method: "POST", body: GENERATE });
    expect(none.status).toBe(200);
    const form = await post("/api/generate", GENERATE, {
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(form.status).toBe(200);
    expect(form.headers["access-control-allow-origin"]).toBeUndefined();
  });
});

describe("hostile JSON on the client port", () => {
  const deep = (depth: number) =>
    JSON.stringify({
      model: "qwen-7b",
      messages: [{ role: "user", content: "hi" }],
      tools: [{ type: "function", function: { name: "f", parameters: { x: "PLACEHOLDER" } } }],
    }).replace('"PLACEHOLDER"', "[".repeat(depth) + "]".repeat(depth));

  it("nested 200,000 deep is 400 invalid_request on both dialects; nothing runs, no engine is asked", async () => {
    const before = engineRequests();
    const openai = await post("/v1/chat/completions", deep(200_000));
    expect([openai.status, codeOf(openai.json)]).toEqual([400, "invalid_request"]);
    expect(openai.text).toMatch(/nests deeper than 100 levels/);
    const ollama = await post("/api/chat", deep(200_000).replace("qwen-7b", "llama3.2:latest"));
    expect([ollama.status, codeOf(ollama.json)]).toEqual([400, "invalid_request"]);
    const jobs = await rawHttp(`${c.node.url}/pair/v1/jobs`, {
      headers: { authorization: `Bearer ${c.node.adminToken}` },
    });
    expect(jobs.json).toEqual([]);
    expect(engineRequests()).toBe(before);
  });

  it("a body just under the bound is served", async () => {
    expect((await post("/v1/chat/completions", deep(90))).status).toBe(200);
  });

  it("a workload always ends: whatever throws after it began, it is finished as failed", async () => {
    const spy = vi.spyOn(c.node.inventory, "serving").mockImplementation(() => {
      throw new Error("boom");
    });
    try {
      const a = await post("/v1/chat/completions", CHAT);
      expect(a.status).toBe(500);
    } finally {
      spy.mockRestore();
    }
    expect(c.node.history.running()).toEqual([]);
    expect(c.node.history.history({ limit: 1 })[0]).toMatchObject({
      status: "failed",
      errorCode: "upstream_error",
    });
  });
});

describe("limits on the connection", () => {
  let slow: Cluster;
  beforeAll(async () => {
    slow = await startCluster([{ name: "vllm-1", api: "openai", models: ["qwen-7b"] }], {
      overrides: { bodyIdleTimeoutMs: 300, maxConnections: 4 },
    });
  });
  afterAll(async () => slow.close());

  it("a body that stops arriving is cut with 408 request_timeout and the connection closed", async () => {
    const started = performance.now();
    const a = await rawHttp(`${slow.node.url}/api/generate`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(GENERATE.length) },
      body: [{ afterMs: 0, text: GENERATE.slice(0, 10) }],
    });
    expect([a.status, codeOf(a.json)]).toEqual([408, "request_timeout"]);
    expect(a.headers["connection"]).toBe("close");
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
    expect(slow.node.history.running()).toEqual([]);
    const b = await rawHttp(`${slow.node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(CHAT.length) },
      body: [{ afterMs: 0, text: "{" }],
    });
    expect(b.json).toMatchObject({ error: { code: "request_timeout", type: "invalid_request_error" } });
  });

  it("a body that keeps coming, slower than the whole bound but within it per piece, is served", async () => {
    const pieces = Array.from({ length: 6 }, (_, i) => ({
      afterMs: 100,
      text: CHAT.slice((i * CHAT.length) / 6, ((i + 1) * CHAT.length) / 6),
    }));
    const a = await rawHttp(`${slow.node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(CHAT.length) },
      body: pieces,
    });
    expect(a.status).toBe(200);
  });

  it("opens at most maxConnections connections; the next ones are closed on arrival", async () => {
    const held: Socket[] = [];
    const open = () =>
      new Promise<Socket>((resolve, reject) => {
        const s = connect(slow.node.port, "127.0.0.1", () => resolve(s));
        s.on("error", reject);
      });
    try {
      for (let i = 0; i < 4; i++) held.push(await open());
      const extra = await open();
      const closed = new Promise<boolean>((resolve) => extra.on("close", () => resolve(true)));
      extra.on("error", () => undefined);
      extra.write(`GET /api/version HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`);
      expect(await closed).toBe(true);
    } finally {
      for (const s of held) s.destroy();
    }
    await until(async () => (await rawHttp(`${slow.node.url}/api/version`)).status === 200);
  });
});

describe("hosts and origins the user allows", () => {
  let allowed: Cluster;
  beforeAll(async () => {
    allowed = await startCluster(
      [{ name: "vllm-1", api: "openai", models: ["qwen-7b"] }],
      {
        seams: {
          env: { PAIR_ORIGINS: "https://*.tools.example, http://192.168.1.20:8080" },
          hostName: "ada-laptop",
        },
      },
      {
        nodeYaml: ["  allowed_hosts: [pair-box.lan]", '  allowed_origins: ["https://chat.example.com"]'],
      },
    );
  });
  afterAll(async () => allowed.close());

  const call = (headers: Record<string, string>) =>
    rawHttp(`${allowed.node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: CHAT,
    });

  it("node.allowed_hosts admits a name, and the node's own page under it", async () => {
    const host = `pair-box.lan:${allowed.node.port}`;
    expect((await call({ host })).status).toBe(200);
    expect((await call({ host, origin: `http://${host}` })).status).toBe(200);
    expect((await call({ host: `other.lan:${allowed.node.port}` })).status).toBe(403);
  });

  it("node.allowed_origins and PAIR_ORIGINS admit origins, with CORS; others stay refused", async () => {
    for (const origin of [
      "https://chat.example.com",
      "https://app.tools.example",
      "http://192.168.1.20:8080",
    ]) {
      const a = await call({ origin, "sec-fetch-site": "cross-site" });
      expect([origin, a.status, a.headers["access-control-allow-origin"]]).toEqual([origin, 200, origin]);
    }
    for (const origin of [EVIL, "https://tools.example.evil.example", "http://192.168.1.20:8081"])
      expect([origin, (await call({ origin })).status]).toEqual([origin, 403]);
  });
});
