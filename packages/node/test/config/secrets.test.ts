// A literal secret, wherever it is written, never appears in what a refusal prints (property tests).
import { inspect } from "node:util";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { ConfigError, parseConfig } from "../../src/config/index.js";
import { HOST } from "./config-fixtures.js";

/** Printable ASCII secrets with enough variety that they cannot occur in a message by chance. */
const randomSecret = fc
  .string({ minLength: 12, maxLength: 64, unit: "grapheme-ascii" })
  .filter((s) => new Set(s).size >= 6 && s.trim() === s);
const tokenSecret = fc
  .tuple(fc.constantFrom("hf_", "sk-", "rpa_"), fc.stringMatching(/^[A-Za-z0-9]{20,40}$/))
  .map(([prefix, body]) => prefix + body);
const secret = fc.oneof(randomSecret, tokenSecret);

/** Each places the secret somewhere in an otherwise plausible file. */
const placements: Record<string, (s: string) => string> = {
  "a rented node's credential": (s) =>
    `rented_nodes:\n  - name: r\n    provider: openai-compatible\n    base_url: https://x.example/v1\n    credential: ${JSON.stringify(s)}\n`,
  "a Hugging Face credential, with other problems around it": (s) =>
    `node: { lisen: 1 }\nrented_nodes:\n  - name: r\n    provider: huggingface-endpoint\n    endpoint: bad\n    credential: ${JSON.stringify(s)}\n    timeouts: { cold_start_s: -1 }\n`,
  "an API key credential": (s) =>
    `node:\n  listen: 0.0.0.0:11434\n  api_keys:\n    - id: k\n      key_credential: ${JSON.stringify(s)}\n`,
  "the account of a reference": (s) =>
    `rented_nodes:\n  - { name: r, provider: huggingface-job, base_url: "https://j--8000.hf.jobs", credential: ${JSON.stringify(`os-credential-store:${s}`)} }\n`,
  "the password of a URL": (s) =>
    `rented_nodes:\n  - { name: r, provider: openai-compatible, base_url: ${JSON.stringify(`https://user:${encodeURIComponent(s)}@x.example/v1`)} }\n`,
  "the user of a URL": (s) =>
    `engines:\n  - { name: e, api: openai, base_url: ${JSON.stringify(`http://${encodeURIComponent(s)}@127.0.0.1:8000/v1`)} }\n`,
  "the query of a URL": (s) =>
    `providers: { runpod: { api: ${JSON.stringify(`https://api.runpod.io/?api_key=${encodeURIComponent(s)}`)} } }\n`,
  "a value under the wrong key": (s) =>
    `node:\n  listen: ${JSON.stringify(s)}\n  peers: [${JSON.stringify(s)}]\n`,
  "a line YAML cannot parse": (s) => `rented_nodes:\n  - credential: ${JSON.stringify(s)} trailing\n`,
  "a block scalar header": (s) => `rented_nodes:\n  - credential: |${s}\n      x\n`,
  "a tag": (s) => `rented_nodes:\n  - credential: !${s} x\n`,
};

function printedRefusal(text: string): string | undefined {
  try {
    parseConfig(text, "pair.yaml", HOST);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const refusal = error as ConfigError;
    return [refusal.message, refusal.toString(), JSON.stringify(refusal), inspect(refusal)].join("\n");
  }
}

describe("literal secrets are never echoed", () => {
  test.each(Object.entries(placements))("in %s", (where, place) => {
    fc.assert(
      fc.property(secret, (s) => {
        if (where === "a tag" || where === "a block scalar header") fc.pre(/^[A-Za-z0-9_-]+$/.test(s));
        const printed = printedRefusal(place(s));
        if (printed === undefined) return; // accepted: nothing printed (e.g. a valid reference name)
        for (const form of [s, JSON.stringify(s).slice(1, -1), encodeURIComponent(s)]) {
          expect(printed).not.toContain(form);
        }
      }),
      { numRuns: 200 },
    );
  });

  test("a literal credential is refused as literal_credential wherever a credential belongs", () => {
    fc.assert(
      fc.property(
        secret.filter((s) => !s.startsWith("os-credential-store:")),
        (s) => {
          const printed = printedRefusal(placements["a rented node's credential"]?.(s) ?? "");
          expect(printed).toContain("rented_nodes[0].credential: literal_credential: a literal secret");
        },
      ),
      { numRuns: 100 },
    );
  });
});
