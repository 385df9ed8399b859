// Bad input over HTTP against a running node (fast-check, bounded runs): random, mutated, truncated,
// invalid-UTF-8 and huge bodies on every client API route (OpenAI and Ollama) and on the admin API's
// POST routes always get an answer below 500 with a JSON error for a 4xx — never a crash, never an
// unhandled rejection, and the node keeps serving. A client that dribbles its headers (slow-loris)
// is cut off within the node's headers bound.
// Seeds are printed by fast-check on failure; rerun with { seed, path } to replay.
import { connect } from "node:net";
import fc from "fast-check";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCluster, type Cluster } from "../e2e/node-harness.js";

const MODEL = "qwen:0.5b";
const HEADERS_TIMEOUT_MS = 1_000;
const RUNS = 200;

const unhandled: unknown[] = [];
const trap = (reason: unknown) => void unhandled.push(reason);
let cluster: Cluster;

beforeAll(async () => {
  process.on("unhandledRejection", trap);
  cluster = await startCluster([{ name: "ollama", api: "ollama", models: [MODEL], maxConcurrent: 8 }], {
    overrides: { headersTimeoutMs: HEADERS_TIMEOUT_MS },
  });
});

afterAll(async () => {
  await cluster?.close();
  process.off("unhandledRejection", trap);
});

const VALID: Readonly<Record<string, Record<string, unknown>>> = {
  "/v1/chat/completions": { model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 3 },
  "/v1/completions": { model: MODEL, prompt: "hi", max_tokens: 3 },
  "/v1/embeddings": { model: MODEL, input: "hi" },
  "/api/chat": { model: MODEL, messages: [{ role: "user", content: "hi" }], stream: false },
  "/api/generate": { model: MODEL, prompt: "hi", stream: false },
  "/api/embed": { model: MODEL, input: "hi" },
  "/api/show": { model: MODEL },
};

const ADMIN_VALID: Readonly<Record<string, Record<string, unknown>>> = {
  "/pair/v1/pin": {},
  "/pair/v1/join": { address: "127.0.0.1:1", pin: "123-456" },
  "/pair/v1/unpair": { node: "nobody" },
  "/pair/v1/rented/lifecycle": { name: "nobody", action: "pause" },
  "/pair/v1/rented/policy": { name: "nobody", policy: "never" },
  "/pair/v1/rented/reset": { name: "nobody" },
  "/pair/v1/rented/share": { name: "nobody", share: true },
  "/pair/v1/ui/logout": {},
};

/** A body for `valid`: random JSON, one field replaced, truncated, with invalid UTF-8, or huge. */
function bodies(valid: Record<string, unknown>): fc.Arbitrary<Buffer> {
  const text = JSON.stringify(valid);
  const keys = Object.keys(valid);
  const huge = fc.constantFrom<unknown>(
    1e308,
    -1,
    2 ** 53 + 1,
    "x".repeat(200_000),
    Array.from({ length: 5_000 }, () => ({ role: "user", content: "hi" })),
    JSON.parse("[".repeat(2_000) + "]".repeat(2_000)) as unknown,
  );
  return fc.oneof(
    fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? "null")),
    fc
      .tuple(fc.constantFrom(...(keys.length > 0 ? keys : ["model"])), fc.oneof(fc.jsonValue(), huge))
      .map(([k, v]) => Buffer.from(JSON.stringify({ ...valid, [k]: v }))),
    fc.nat({ max: text.length - 1 }).map((n) => Buffer.from(text.slice(0, n))),
    fc
      .tuple(fc.nat({ max: text.length }), fc.uint8Array({ minLength: 1, maxLength: 8 }))
      .map(([at, bytes]) =>
        Buffer.concat([
          Buffer.from(text.slice(0, at)),
          Buffer.from(bytes.map((b) => 0x80 | (b & 0x3f))),
          Buffer.from(text.slice(at)),
        ]),
      ),
    fc.string({ unit: "binary", maxLength: 200 }).map((s) => Buffer.from(s)),
    fc.constant(Buffer.from("[".repeat(100_000))),
  );
}

async function post(
  path: string,
  body: Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const res = await request(`${cluster.node.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

function expectClean(path: string, body: Buffer, answer: { status: number; text: string }): void {
  const what = `${path} ${body.subarray(0, 120).toString("latin1")} → ${answer.status} ${answer.text.slice(0, 200)}`;
  expect(answer.status, what).toBeLessThan(500);
  if (answer.status >= 400) {
    const parsed = JSON.parse(answer.text) as Record<string, unknown>;
    expect(JSON.stringify(parsed), what).toMatch(/error/);
  }
}

async function stillServes(): Promise<void> {
  const ok = await post("/api/chat", Buffer.from(JSON.stringify(VALID["/api/chat"])));
  expect(ok.status).toBe(200);
}

describe("bad input over HTTP", () => {
  it(`client API bodies (OpenAI and Ollama): ${RUNS} runs, always < 500, never an unhandled rejection`, async () => {
    const routes = Object.keys(VALID);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes).chain((path) => fc.tuple(fc.constant(path), bodies(VALID[path]!))),
        async ([path, body]) => expectClean(path, body, await post(path, body)),
      ),
      { numRuns: RUNS },
    );
    await stillServes();
    expect(unhandled).toEqual([]);
  });

  it(`admin API bodies with the token: ${RUNS} runs, always < 500`, async () => {
    const auth = { authorization: `Bearer ${cluster.node.adminToken}` };
    const routes = Object.keys(ADMIN_VALID);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes).chain((path) => fc.tuple(fc.constant(path), bodies(ADMIN_VALID[path]!))),
        async ([path, body]) => expectClean(path, body, await post(path, body, auth)),
      ),
      { numRuns: RUNS },
    );
    await stillServes();
    expect(unhandled).toEqual([]);
  });

  it("a client that dribbles its headers (slow-loris) is cut off within the headers bound", async () => {
    const socket = connect(Number(new URL(cluster.node.url).port), "127.0.0.1");
    const started = performance.now();
    const closed = new Promise<number>((resolve) => socket.on("close", () => resolve(performance.now())));
    socket.on("error", () => undefined);
    socket.write("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n");
    const dribble = setInterval(() => socket.write("X-A: b\r\n"), 100);
    const closedAt = await closed;
    clearInterval(dribble);
    // Node checks once a second (connectionsCheckingInterval): the bound plus one check, plus slack.
    expect(closedAt - started).toBeLessThan(HEADERS_TIMEOUT_MS + 1_000 + 1_000);
    expect(closedAt - started).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    await stillServes();
  });
});
