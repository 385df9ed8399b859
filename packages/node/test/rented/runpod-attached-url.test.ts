// A Runpod pod attached by id (no `pod:` section) is reached through the one configured template,
// `providers.runpod.proxy_url`, on port 8000 plus /v1, exactly as a pod PAIR creates: Runpod's own proxy
// by default, the emulator's path form when configured; a written base_url still wins.
import { proxyUrlFromTemplate } from "@pair/runpod";
import { describe, expect, it } from "vitest";
import { parseConfig, type PairConfig } from "../../src/config/index.js";
import { configuredBaseUrl } from "../../../sponsor/src/registry/rented-probe.js";

const HOST = { homeDir: "/home/ada", hostName: "ada-laptop" };

function config(lines: readonly string[]): PairConfig {
  return parseConfig(
    [
      "rented_nodes:",
      "  - { name: p, provider: runpod, endpoint: ab12cd, credential: os-credential-store:rp, budget: { unlimited: true } }",
      ...lines,
      "",
    ].join("\n"),
    "test.yaml",
    HOST,
  );
}

/** The base URL the sponsor uses for the node, as the wiring builds it from the config. */
function baseUrlOf(c: PairConfig): string | undefined {
  const [node] = c.rentedNodes;
  if (node === undefined) throw new Error("no rented node");
  return configuredBaseUrl(node, proxyUrlFromTemplate(c.providers.runpod.proxyUrl));
}

describe("a Runpod pod attached by id", () => {
  it("defaults to Runpod's proxy on port 8000", () => {
    expect(baseUrlOf(config([]))).toBe("https://ab12cd-8000.proxy.runpod.net/v1");
  });

  it("follows providers.runpod.proxy_url (the emulator's path form, a trailing slash dropped)", () => {
    const c = config([
      "providers:",
      "  runpod: { proxy_url: 'https://127.0.0.1:9003/proxy/{pod_id}-{port}/' }",
    ]);
    expect(baseUrlOf(c)).toBe("https://127.0.0.1:9003/proxy/ab12cd-8000/v1");
    const host = config(["providers:", "  runpod: { proxy_url: 'https://{port}-{pod_id}.pods.example' }"]);
    expect(baseUrlOf(host)).toBe("https://8000-ab12cd.pods.example/v1");
  });

  it("keeps a base_url written in the config", () => {
    const c = parseConfig(
      [
        "rented_nodes:",
        "  - name: p",
        "    provider: runpod",
        "    endpoint: ab12cd",
        "    base_url: https://gw.example/ab12cd/v1",
        "    credential: os-credential-store:rp",
        "    budget: { unlimited: true }",
        "providers:",
        "  runpod: { proxy_url: 'https://127.0.0.1:9003/proxy/{pod_id}-{port}' }",
        "",
      ].join("\n"),
      "test.yaml",
      HOST,
    );
    expect(baseUrlOf(c)).toBe("https://gw.example/ab12cd/v1");
  });

  it("is the same URL a pod PAIR creates gets from the template", () => {
    const c = config([
      "providers:",
      "  runpod: { proxy_url: 'https://127.0.0.1:9003/proxy/{pod_id}-{port}' }",
    ]);
    const created = proxyUrlFromTemplate(c.providers.runpod.proxyUrl)("ab12cd", 8000);
    expect(baseUrlOf(c)).toBe(`${created}/v1`);
  });

  it("other providers keep their own base_url; a Hugging Face endpoint has none until looked up", () => {
    const c = parseConfig(
      [
        "rented_nodes:",
        "  - { name: r, provider: huggingface-providers, credential: os-credential-store:hf }",
        "  - { name: e, provider: huggingface-endpoint, endpoint: ns/ep, credential: os-credential-store:hf, budget: { unlimited: true } }",
        "",
      ].join("\n"),
      "test.yaml",
      HOST,
    );
    expect(c.rentedNodes.map((n) => configuredBaseUrl(n))).toEqual([
      "https://router.huggingface.co/v1",
      undefined,
    ]);
  });
});
