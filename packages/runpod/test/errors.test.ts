import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import {
  RedactedString,
  RunpodApiError,
  kindOfAnswer,
  parseProblem,
  parseRateLimit,
  parseRetryAfterMs,
} from "../src/index.js";

describe("parseProblem", () => {
  it("reads v2 problem+json", () => {
    expect(parseProblem('{"title":"Not Found","status":404,"detail":"pod not found"}')).toEqual({
      title: "Not Found",
      detail: "pod not found",
      errors: [],
    });
  });

  it("reads the shapes v1 was seen to send, and plain text", () => {
    expect(parseProblem('{"error":"pod not found","status":404}')).toEqual({
      detail: "pod not found",
      errors: [],
    });
    expect(parseProblem('{"message":"Pod not found"}')).toEqual({ detail: "Pod not found", errors: [] });
    expect(parseProblem('[{"error":"bad","problems":["At /pods/gpuCount/minimum: got 0, want 1"]}]')).toEqual(
      {
        detail: "bad; At /pods/gpuCount/minimum: got 0, want 1",
        errors: ["bad", "At /pods/gpuCount/minimum: got 0, want 1"],
      },
    );
    expect(parseProblem("<html>502 Bad Gateway</html>")).toEqual({
      detail: "<html>502 Bad Gateway</html>",
      errors: [],
    });
    expect(parseProblem("")).toEqual({ errors: [] });
  });
});

describe("kindOfAnswer", () => {
  const problem = (detail: string) => ({ detail, errors: [] });
  it("classifies capacity and balance refusals by wording, whatever the status", () => {
    const noneLeft = problem(
      "create pod: There are no longer any instances available with the requested specifications.\ncreate pod: There are no longer any instances available with the requested specifications.",
    );
    expect(kindOfAnswer("createPod", 500, noneLeft)).toBe("no_capacity");
    expect(
      kindOfAnswer("createPod", 400, problem("create pod: There are no instances currently available")),
    ).toBe("no_capacity");
    expect(
      kindOfAnswer(
        "podAction",
        500,
        problem("There are not enough free GPUs on the host machine to start this pod."),
      ),
    ).toBe("no_capacity");
    expect(
      kindOfAnswer(
        "createPod",
        500,
        problem(
          "create pod: Your account balance is too low to rent a pod. Please add funds to your account.",
        ),
      ),
    ).toBe("insufficient_funds");
  });

  it("classifies v2 create refusals from status and body: capacity, funds, the key, else stop", () => {
    // v2: a 400 (sometimes 403) with free-text detail says no capacity; 402 is money; 401/403 the key.
    expect(kindOfAnswer("createPod", 400, problem("No GPU capacity for NVIDIA L4 in SECURE cloud"))).toBe(
      "no_capacity",
    );
    expect(kindOfAnswer("createPod", 403, problem("the requested GPU type is not available"))).toBe(
      "no_capacity",
    );
    expect(kindOfAnswer("createPod", 402, problem("Payment Required"))).toBe("insufficient_funds");
    expect(kindOfAnswer("createPod", 400, problem("insufficient funds to deploy this pod"))).toBe(
      "insufficient_funds",
    );
    expect(kindOfAnswer("createPod", 401, problem("invalid bearer token"))).toBe("unauthorized");
    expect(kindOfAnswer("createPod", 403, problem("this API key does not have permission"))).toBe(
      "forbidden",
    );
    // A schema rejection lists its field errors: never read as capacity, whatever it says.
    const schema = { detail: "invalid request", errors: ["gpu.id: value not available in enum"] };
    expect(kindOfAnswer("createPod", 400, schema)).toBe("invalid_request");
    // Unclassified free text: the request is refused as it is (no next type, no retry).
    expect(kindOfAnswer("createPod", 400, problem("image name is malformed"))).toBe("invalid_request");
    // A 5xx's broad wording proves nothing: the pod may exist.
    expect(kindOfAnswer("createPod", 503, problem("Service Unavailable"))).toBe("uncertain");
  });

  it("makes any other 5xx to a create uncertain (Runpod may have created the pod), and a read's 5xx a server error", () => {
    expect(kindOfAnswer("createPod", 500, problem("create pod: query failed"))).toBe("uncertain");
    expect(kindOfAnswer("listPods", 502, problem(""))).toBe("server");
    expect(kindOfAnswer("listPods", 404, problem(""))).toBe("not_found");
    expect(kindOfAnswer("podAction", 409, problem(""))).toBe("conflict");
    expect(kindOfAnswer("createPod", 422, problem(""))).toBe("invalid_request");
    expect(new RunpodApiError({ kind: "uncertain", operation: "createPod", message: "x" }).retryable).toBe(
      false,
    );
  });
});

describe("rate-limit headers", () => {
  it("merges RateLimit and RateLimit-Policy by window and skips junk", () => {
    expect(
      parseRateLimit(
        '"minute";r=0;t=12, "hour";r=2800;t=1812, junk;;',
        '"minute";q=60;w=60, "hour";q=3000;w=3600, "day";q=50000;w=86400',
      ),
    ).toEqual({
      windows: [
        { name: "minute", quota: 60, windowSeconds: 60, remaining: 0, resetSeconds: 12 },
        { name: "hour", quota: 3000, windowSeconds: 3600, remaining: 2800, resetSeconds: 1812 },
        { name: "day", quota: 50000, windowSeconds: 86400 },
        { name: "junk" },
      ],
    });
    expect(parseRateLimit(undefined, undefined)).toBeUndefined();
  });

  it("reads Retry-After as seconds or as an HTTP date", () => {
    const now = Date.UTC(2026, 0, 1, 0, 0, 0);
    expect(parseRetryAfterMs("12", now)).toBe(12_000);
    expect(parseRetryAfterMs("Thu, 01 Jan 2026 00:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfterMs("soon", now)).toBeUndefined();
    expect(parseRetryAfterMs(undefined, now)).toBeUndefined();
  });
});

describe("RedactedString", () => {
  it("reveals only through reveal()", () => {
    const key = new RedactedString("rp_secret_value", "runpod key");
    expect(key.reveal()).toBe("rp_secret_value");
    expect(String(key)).toBe("[redacted runpod key]");
    expect(JSON.stringify({ key })).toBe('{"key":"[redacted runpod key]"}');
    expect(inspect({ key })).not.toContain("rp_secret_value");
  });
});
