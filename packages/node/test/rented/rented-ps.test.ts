// A running rented node's models in `/api/ps`, as Ollama's own CLI decodes and prints them
// (support/ollama-cli.ts): an attached endpoint, which PAIR never unloads, reads "Forever" (an
// entry without `expires_at` would read "Stopping..."), with a 12-character ID and its serving node.
import { Ollama } from "ollama";
import { describe, expect, it } from "vitest";
import { ollamaPs } from "../support/ollama-cli.js";
import { cleanupAfterEach, until } from "../support/eventually.js";
import { fakeHfToken } from "../support/fake-token.js";
import { keyringCa } from "../support/keyring-worlds.js";
import { startRentedEndpoint, startSponsor } from "./rented-harness.js";

const TOKEN = fakeHfToken();
const defer = cleanupAfterEach();
const keyring = keyringCa();

describe("/api/ps with a running rented node", () => {
  it("lists its model as `ollama ps` prints it: Forever, its node and window, no size invented", async () => {
    const rented = await startRentedEndpoint(keyring.ca, { apiKey: TOKEN, models: ["llama-70b"] });
    defer(() => rented.engine.close());
    const sponsor = await startSponsor({ token: TOKEN, baseUrl: rented.baseUrl, caPem: keyring.ca.certPem });
    defer(() => sponsor.close());
    const ps = async () => (await fetch(`${sponsor.node.url}/api/ps`)).json();
    await until(async () => ollamaPs(await ps()).length === 1);
    const rows = ollamaPs(await ps());
    expect(rows).toHaveLength(1);
    const { id, ...row } = rows[0]!;
    expect(id).toMatch(/^[0-9a-f]{12}$/);
    expect(row).toEqual({
      name: "llama-70b",
      size: "0 B",
      processor: "100% CPU",
      context: "1048576", // the window the engine publishes
      until: "Forever",
    });
    const { models } = await new Ollama({ host: sponsor.node.url }).ps();
    expect(models[0]).toMatchObject({ name: "llama-70b", node: "gpu-rent", engine: "openai-compatible" });
  });
});
