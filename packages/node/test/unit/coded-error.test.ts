// The daemon's thrown errors share one base (CodedError, from @pair/cluster): each keeps its code
// and message as before, carries the lower error as `cause`, and says whether a retry can help.
import { describe, expect, it } from "vitest";
import { ApiKeyError } from "../../src/auth/index.js";
import { ClusterError } from "@pair/cluster";
import { ConfigError } from "../../src/config/index.js";
import { CredentialError } from "../../src/credentials/index.js";
import { CodedError } from "../../src/errors/coded-error.js";
import { ListenError } from "../../src/node.js";

const cause = new Error("lower");

describe("CodedError", () => {
  it.each([
    [
      "CredentialError",
      new CredentialError("credential_unavailable", "no keyring", { cause }),
      false,
      "credential_unavailable: no keyring",
    ],
    ["ApiKeyError", new ApiKeyError("api_keys_busy", "held", { cause }), true, "api_keys_busy: held"],
    [
      "ApiKeyError",
      new ApiKeyError("api_key_not_found", "gone", { cause }),
      false,
      "api_key_not_found: gone",
    ],
    [
      "ClusterError",
      new ClusterError("unknown_peer", "nobody", "peers.json", { cause }),
      false,
      "unknown_peer: nobody",
    ],
    ["ListenError", new ListenError("port_in_use", "taken", { cause }), false, "taken"],
  ] as const)("%s carries code, cause and retryable", (name, error, retryable, message) => {
    expect(error).toBeInstanceOf(CodedError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(error.retryable).toBe(retryable);
    expect(error.cause).toBe(cause);
    expect(error.message).toBe(message);
  });

  it("ConfigError keeps its one code and its problems", () => {
    const error = new ConfigError("pair.yaml", [
      { path: "node.listen", code: "invalid_value", message: "no" },
    ]);
    expect(error).toBeInstanceOf(CodedError);
    expect(error.code).toBe("invalid_config");
    expect(error.retryable).toBe(false);
    expect(error.cause).toBeUndefined();
    expect(error.message).toBe(
      "invalid_config: pair.yaml: the configuration was refused (1 problem):\npair.yaml: node.listen: invalid_value: no",
    );
  });
});
