// The pure retry policy and the wire readers: which outcomes retry, for how long, and what a
// malformed answer is.
import { describe, expect, it } from "vitest";
import {
  DEFAULT_RETRY_POLICY,
  backoffMs,
  decideRetry,
  isAlreadyRunning,
  parseRetryAfter,
  providerMessageOf,
  toCreateBody,
  toEndpoint,
  toUpdateBody,
  validateRetryPolicy,
} from "../src/index.js";
import { readEndpoint, WireShapeError } from "../src/wire.js";

const policy = DEFAULT_RETRY_POLICY;
const status = (code: number, retryAfterMs?: number) => ({
  kind: "status" as const,
  status: code,
  retryAfterMs,
});

describe("decideRetry", () => {
  it("never retries a non-idempotent call, whatever happened", () => {
    for (const outcome of [
      status(429, 1000),
      status(503),
      status(500),
      { kind: "no-answer" as const, sent: true },
    ])
      expect(decideRetry(policy, false, 1, outcome, 0.5)).toEqual({ retry: false });
  });

  it("waits retry-after on 429 and 503, within the bound", () => {
    expect(decideRetry(policy, true, 1, status(429, 7000), 0.9)).toEqual({ retry: true, delayMs: 7000 });
    expect(decideRetry(policy, true, 1, status(503, 0), 0.9)).toEqual({ retry: true, delayMs: 0 });
    expect(decideRetry(policy, true, 1, status(429, 61_000), 0.9)).toEqual({ retry: false });
  });

  it("backs off on 5xx and lost answers, never on 4xx, and stops at maxAttempts", () => {
    expect(decideRetry(policy, true, 1, status(502), 0)).toEqual({ retry: true, delayMs: 125 });
    expect(decideRetry(policy, true, 2, { kind: "no-answer", sent: true }, 0.999)).toEqual({
      retry: true,
      delayMs: 500,
    });
    for (const code of [400, 401, 403, 404, 409])
      expect(decideRetry(policy, true, 1, status(code), 0)).toEqual({ retry: false });
    expect(decideRetry(policy, true, policy.maxAttempts, status(503, 10), 0)).toEqual({ retry: false });
    expect(backoffMs(policy, 10, 1)).toBeLessThanOrEqual(policy.maxDelayMs);
  });

  it("checks its limits and reads retry-after as seconds or an HTTP date", () => {
    expect(validateRetryPolicy(policy)).toEqual([]);
    expect(validateRetryPolicy({ ...policy, maxAttempts: 0 })).toHaveLength(1);
    expect(parseRetryAfter("12", 0)).toBe(12_000);
    expect(parseRetryAfter("Wed, 21 Oct 2026 07:28:10 GMT", Date.UTC(2026, 9, 21, 7, 28, 0))).toBe(10_000);
    expect(parseRetryAfter("soon", 0)).toBeUndefined();
    expect(parseRetryAfter(undefined, 0)).toBeUndefined();
  });
});

describe("wire", () => {
  const endpoint = {
    name: "ep",
    type: "private",
    model: { repository: "Qwen/Qwen3-0.6B" },
    status: {
      state: "warming",
      createdAt: "2026-08-01T00:00:00.000000001Z",
      updatedAt: "2026-08-01T00:00:00Z",
    },
  };

  it("reads an endpoint with only the required keys; unknown states are kept, unreported fields undefined", () => {
    const mapped = toEndpoint("alice", readEndpoint(endpoint));
    expect(mapped).toMatchObject({
      state: "unrecognized",
      rawState: "warming",
      url: undefined,
      minReplica: undefined,
    });
    // The ns spelling becomes the canonical ms instant (the same endpoint in another answer).
    expect(mapped.incarnation).toBe("2026-08-01T00:00:00.000Z");
  });

  it("refuses an answer missing what clients index directly", () => {
    expect(() => readEndpoint({ ...endpoint, status: { state: "running" } })).toThrow(WireShapeError);
    expect(() => readEndpoint({ ...endpoint, name: undefined })).toThrow(/endpoint.name/);
  });

  it("builds create bodies without a null task, and partial update bodies", () => {
    const body = toCreateBody({
      name: "ep",
      accessType: "private",
      vendor: "aws",
      region: "us-east-1",
      accelerator: "gpu",
      instanceType: "nvidia-l4",
      instanceSize: "x1",
      minReplica: 0,
      maxReplica: 1,
      repository: "Qwen/Qwen3-0.6B",
    });
    expect(body.model).not.toHaveProperty("task");
    expect(body.model).toMatchObject({ revision: null, image: { huggingface: {} }, framework: "pytorch" });
    expect(toUpdateBody({ minReplica: 1 })).toEqual({ compute: { scaling: { minReplica: 1 } } });
    expect(toUpdateBody({ scaleToZeroTimeoutMin: null })).toEqual({
      compute: { scaling: { scaleToZeroTimeout: null } },
    });
  });

  it("takes HF's message from every error body shape", () => {
    expect(providerMessageOf('{"error":"boom"}')).toBe("boom");
    expect(providerMessageOf('{"error":["a","b"]}')).toBe("a; b");
    expect(providerMessageOf('{"error":"code","error_description":"why"}')).toBe("code; why");
    expect(providerMessageOf('{"errors":[{"message":"m1"}]}')).toBe("m1");
    expect(providerMessageOf("plain text")).toBe("plain text");
  });

  it("knows a resume's 'already running' as huggingface_hub does: a 400 whose raw text says so", () => {
    // The body's shape is not documented: the phrase counts wherever it is, as in huggingface_hub.
    for (const body of [
      '{"error":"Endpoint \'qwen\' is already running"}',
      '{"detail":"Endpoint is already running"}',
      "Bad Request: endpoint already running",
    ])
      expect(isAlreadyRunning(400, body)).toBe(true);
    expect(isAlreadyRunning(422, '{"error":"already running"}')).toBe(false);
    expect(isAlreadyRunning(400, '{"error":"quota exceeded"}')).toBe(false);
    expect(isAlreadyRunning(400, undefined)).toBe(false);
  });
});
