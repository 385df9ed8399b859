// A web page must not wake a paused rented GPU: a cross-site no-cors POST (what any page can send to
// 127.0.0.1:11434) and a DNS-rebinding one reach a sponsor whose managed Hugging Face endpoint is
// paused with wake on request on. Both are refused before routing; the endpoint stays paused and
// no resume reaches the emulator. The same request without Origin (curl, an SDK) still wakes it.
import { describe, expect, it } from "vitest";
import { keyringWorlds } from "../support/keyring-worlds.js";
import { rawHttp } from "../support/raw-http.js";
import { managedWorld, MODEL, NODE, type ManagedWorld } from "./managed-harness.js";

const worlds = keyringWorlds<ManagedWorld>();
const CHAT = JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 3 });

async function pausedSponsor(): Promise<ManagedWorld> {
  const endpoint = { running: true, paused: true };
  const w = worlds.add(await managedWorld(worlds.ca, [], [], { endpoint, start: true }));
  await w.node.managed.tick();
  return w;
}

const resumes = (w: ManagedWorld) =>
  w.hf.controlRequests().filter((r) => r.method === "POST" && r.path.includes("/resume")).length;

describe("a paused rented endpoint with wake on request", () => {
  it("is not woken by a cross-site no-cors POST nor a rebinding Host; a request without Origin wakes it", async () => {
    const w = await pausedSponsor();
    const before = resumes(w);
    const attacks = [
      {
        origin: "https://evil.example",
        "sec-fetch-site": "cross-site",
        "content-type": "text/plain;charset=UTF-8",
      },
      { host: `evil.example:${w.node.port}`, "content-type": "text/plain;charset=UTF-8" },
    ];
    for (const headers of attacks) {
      const a = await rawHttp(`${w.node.url}/v1/chat/completions`, { method: "POST", headers, body: CHAT });
      expect(a.status).toBe(403);
      expect(a.headers["x-pair-served-by"]).toBeUndefined();
    }
    await w.node.managed.tick();
    expect(resumes(w)).toBe(before);
    expect(w.hf.endpoints.get("alice", "qwen")?.state).toBe("paused");
    expect(w.node.history.running()).toEqual([]);
    expect(w.node.managed.view(NODE)).toMatchObject({ open_obligations: 0 });

    // The control: the same POST as curl sends it does wake the endpoint (so the refusal above is
    // what kept it paused, not some other reason).
    const served = rawHttp(`${w.node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: CHAT,
      timeoutMs: 60_000,
    });
    let answered = false;
    void served.then(() => (answered = true));
    for (let i = 0; i < 400 && !answered; i += 1) {
      w.hf.advance(5_000);
      await new Promise((r) => setTimeout(r, 25));
    }
    expect((await served).status).toBe(200);
    expect(resumes(w)).toBeGreaterThan(before);
  });
});
