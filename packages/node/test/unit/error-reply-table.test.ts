// What an upstream's error reply means, as one table read against the error catalogue: which
// replies fail over to the next upstream and which are the client's answer.
import { describe, expect, it } from "vitest";
import { PAIR_ERROR_CODES, type PairErrorCode } from "@pair/dialects";
import { classifyErrorReply, pairErrorOf } from "../../src/server/upstream-failures.js";

const engine = (status: number) => classifyErrorReply({ upstream: "engine", status, given: undefined });

describe("classifyErrorReply", () => {
  it("fails over when an engine lost the model, is busy or failed; answers its other refusals", () => {
    expect(engine(404)).toEqual({ code: "model_not_found", failover: true });
    expect(engine(429)).toEqual({ code: "upstream_error", failover: true });
    expect(engine(500)).toEqual({ code: "upstream_error", failover: true });
    expect(engine(503)).toEqual({ code: "upstream_error", failover: true });
    expect(engine(400)).toEqual({ code: "invalid_request", failover: false });
    expect(engine(422)).toEqual({ code: "invalid_request", failover: false });
    // An engine's own 401/403 is its answer; a rented node's means its credential was refused.
    expect(engine(401)).toEqual({ code: "invalid_request", failover: false });
    expect(classifyErrorReply({ upstream: "rented", status: 403, given: undefined })).toEqual({
      code: "credential_rejected",
      failover: true,
    });
  });

  it("reads a peer's PAIR code against the catalogue, whatever the status it came with", () => {
    for (const code of Object.keys(PAIR_ERROR_CODES) as PairErrorCode[]) {
      const spec = PAIR_ERROR_CODES[code];
      for (const status of [spec.status, 503])
        expect(classifyErrorReply({ upstream: "peer", status, given: { code, message: "m" } }), code).toEqual(
          {
            code,
            failover: spec.retryable || spec.otherNodeMayServe,
          },
        );
    }
    const peer = (code: PairErrorCode) =>
      classifyErrorReply({
        upstream: "peer",
        status: PAIR_ERROR_CODES[code].status,
        given: { code, message: "m" },
      });
    // A node's own state: another node may serve. The request itself at fault: the answer.
    expect(peer("rented_node_paused").failover).toBe(true);
    expect(peer("budget_exceeded").failover).toBe(true);
    expect(peer("rented_node_not_shared").failover).toBe(false);
    expect(peer("invalid_request").failover).toBe(false);
  });
});

describe("pairErrorOf", () => {
  it("reads PAIR's code, message and node from either envelope, nothing from an engine's body", () => {
    expect(
      pairErrorOf({
        error: { message: "paused", type: "server_error", code: "rented_node_paused", node: "g" },
      }),
    ).toEqual({ code: "rented_node_paused", message: "paused", node: "g" });
    expect(pairErrorOf({ error: "no node serves x", code: "model_not_found" })).toEqual({
      code: "model_not_found",
      message: "no node serves x",
    });
    expect(pairErrorOf({ error: { message: "x", code: "context_length_exceeded" } })).toBeUndefined();
    expect(pairErrorOf("Bad Gateway")).toBeUndefined();
  });
});
