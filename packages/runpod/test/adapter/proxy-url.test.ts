// A pod's proxy base URL from a `providers.runpod.proxy_url` template: Runpod's own by default, the
// emulator's path form, the id lowercased and percent-encoded so an id cannot change the URL's shape.
import { describe, expect, it } from "vitest";
import {
  podApiBaseUrl,
  proxyUrlFromTemplate,
  RUNPOD_PROXY_URL,
  RUNPOD_PROXY_URL_TEMPLATE,
} from "../../src/index.js";

describe("proxyUrlFromTemplate", () => {
  it("gives Runpod's proxy host by default", () => {
    expect(RUNPOD_PROXY_URL("AbC123", 8000)).toBe("https://abc123-8000.proxy.runpod.net");
    expect(proxyUrlFromTemplate(RUNPOD_PROXY_URL_TEMPLATE)("x1y2", 8888)).toBe(
      "https://x1y2-8888.proxy.runpod.net",
    );
  });

  it("fills a path template (the emulator's), each placeholder wherever it stands", () => {
    const of = proxyUrlFromTemplate("https://127.0.0.1:9003/proxy/{pod_id}-{port}/{pod_id}");
    expect(of("p1", 8000)).toBe("https://127.0.0.1:9003/proxy/p1-8000/p1");
  });

  it("percent-encodes an id that would change the host or path: such a URL fails, never reaches another host", () => {
    const url = RUNPOD_PROXY_URL("evil.example/x@y", 8000);
    expect(url).toBe("https://evil.example%2Fx%40y-8000.proxy.runpod.net");
    expect(() => new URL(url)).toThrow();
    const inPath = proxyUrlFromTemplate("https://127.0.0.1:9003/proxy/{pod_id}-{port}")("../x?y#z", 1);
    expect(new URL(inPath).pathname).toBe("/proxy/..%2Fx%3Fy%23z-1");
  });
});

describe("podApiBaseUrl", () => {
  it("is the template's URL on the port plus /v1, whatever template is configured", () => {
    expect(podApiBaseUrl(RUNPOD_PROXY_URL, "AbC123", 8000)).toBe("https://abc123-8000.proxy.runpod.net/v1");
    const emulator = proxyUrlFromTemplate("https://127.0.0.1:9003/proxy/{pod_id}-{port}");
    expect(podApiBaseUrl(emulator, "p1", 8000)).toBe("https://127.0.0.1:9003/proxy/p1-8000/v1");
  });

  it("never doubles a slash when the proxy URL ends with one", () => {
    expect(podApiBaseUrl(() => "https://gw.example/pods/p1/", "p1", 8000)).toBe(
      "https://gw.example/pods/p1/v1",
    );
  });
});
