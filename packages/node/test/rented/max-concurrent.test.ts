// `max_concurrent` of a rented node: how many requests this node sends it at once (default 64); the
// rest wait in the node's queue and are all served. A value outside 1..1024 is refused at start.
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { cleanupAfterEach } from "../support/eventually.js";
import { fakeHfToken } from "../support/fake-token.js";
import { keyringCa } from "../support/keyring-worlds.js";
import { startRentedEndpoint, startSponsor } from "./rented-harness.js";
import { chatReply } from "../support/chat.js";

const TOKEN = fakeHfToken();
const defer = cleanupAfterEach();
const keyring = keyringCa();

/** Six chats at once through a sponsor whose rented node has `limit` (none: the default). */
async function peakOnEndpoint(limit?: number): Promise<{ statuses: number[]; peak: number }> {
  const rented = await startRentedEndpoint(keyring.ca, { apiKey: TOKEN, tokenDelayMs: 40, maxTokens: 4 });
  defer(() => rented.engine.close());
  const sponsor = await startSponsor({
    token: TOKEN,
    baseUrl: rented.baseUrl,
    caPem: keyring.ca.certPem,
    target: [
      "    provider: openai-compatible",
      `    base_url: ${rented.baseUrl}`,
      ...(limit === undefined ? [] : [`    max_concurrent: ${limit}`]),
    ],
  });
  defer(() => sponsor.close());
  const chat = () => chatReply(sponsor.node.url, { model: "llama-70b" }).then((r) => r.status);
  const statuses = await Promise.all(Array.from({ length: 6 }, chat));
  return { statuses, peak: rented.engine.stats().maxInFlightSeen };
}

describe("a rented node's max_concurrent", () => {
  it("sends it at most that many at once; the others wait and are served", async () => {
    const { statuses, peak } = await peakOnEndpoint(2);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    expect(peak).toBe(2);
  });

  it("defaults to 64: six at once all reach it", async () => {
    const { statuses, peak } = await peakOnEndpoint();
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(peak).toBe(6);
  });

  it("refuses 0 at start, naming the key", () => {
    const text = [
      "rented_nodes:",
      "  - name: gpu",
      "    provider: openai-compatible",
      "    base_url: https://gpu.example/v1",
      "    max_concurrent: 0",
    ].join("\n");
    expect(() => parseConfig(text, "pair.yaml", { homeDir: "/tmp", hostName: "h" })).toThrow(
      /rented_nodes\[0\]\.max_concurrent: invalid_value/,
    );
  });
});
