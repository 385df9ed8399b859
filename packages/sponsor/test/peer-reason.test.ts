// What peers learn of a rented node's problem: a closed set of codes with fixed texts, listed in
// docs/security.md, and the kind of a transport failure read from the sponsor's detail.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { failureKindOf, peerReasonText, RENTED_PROBLEMS, rentedProblemOf } from "../src/index.js";

const doc = readFileSync(new URL("../../../docs/security.md", import.meta.url), "utf8");

describe("a rented node's problem as peers see it", () => {
  it("docs/security.md lists every code with its text, and no other", () => {
    const listed = [...doc.matchAll(/^ {2}- `([a-z_]+)`: (.+)$/gm)].map((m) => [m[1], m[2]]);
    expect(Object.fromEntries(listed)).toEqual(RENTED_PROBLEMS);
  });

  it("tells the kind of a transport failure without repeating it", () => {
    expect(failureKindOf("ECONNREFUSED connect ECONNREFUSED 127.0.0.2:9")).toBe("unreachable");
    expect(failureKindOf("UNABLE_TO_VERIFY_LEAF_SIGNATURE unable to verify the first certificate")).toBe(
      "tls_failed",
    );
    expect(failureKindOf("UND_ERR_CONNECT_TIMEOUT Connect Timeout Error")).toBe("timeout");
    expect(failureKindOf("HTTP 500: gateway failed")).toBe("upstream_error");
    expect(rentedProblemOf("unreachable", "ENOTFOUND my-ns-my-endpoint.endpoints.huggingface.cloud")).toBe(
      "unreachable",
    );
    expect(rentedProblemOf("failed", "namespace acme/llama failed: out of memory")).toBe("failed");
    expect(peerReasonText("timeout")).toBe("timeout: it did not answer its sponsor in time");
  });
});
