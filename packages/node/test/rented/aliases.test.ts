// Model aliases across engines (issue 8): a local Ollama engine advertises `llama3:8b`, a Hugging Face
// endpoint (the emulator, over HTTPS) the repo id; `model_aliases` makes them one model, so the
// routing policy decides between them: the local engine serves under the default policy, the rented
// node when the local one is down — each sent the name it advertises (engines 404 any other), the
// client's reply keeping the name it asked for.
import { startEngineEmulator } from "@pair/emulators";
import { vllmImage } from "@pair/huggingface";
import { describe, expect, it } from "vitest";
import { cleanupAfterEach, until } from "../support/eventually.js";
import { fakeHfToken } from "../support/fake-token.js";
import { startSponsor, type Sponsor } from "./rented-harness.js";
import { keyringCa } from "../support/keyring-worlds.js";
import { chatReply } from "../support/chat.js";
import { hfForAlice, QUICK_HF_TIMINGS } from "../support/hf-alice.js";

const TOKEN = fakeHfToken();
const TAG = "llama3:8b";
const REPO = "meta-llama/Meta-Llama-3-8B-Instruct";
const ALIAS = "llama3-8b";
const defer = cleanupAfterEach();
const keyring = keyringCa();

async function world(aliases = true) {
  const local = await startEngineEmulator({
    api: "ollama",
    name: "local-ollama",
    models: [{ name: TAG, maxTokens: 4 }],
  });
  defer(() => local.close());
  const { hf, api } = await hfForAlice(keyring.ca, TOKEN, { timings: QUICK_HF_TIMINGS });
  defer(() => hf.close());
  defer(() => api.close());
  await api.createEndpoint("alice", {
    name: "llama",
    accessType: "private",
    vendor: "aws",
    region: "us-east-1",
    accelerator: "gpu",
    instanceType: "nvidia-l4",
    instanceSize: "x1",
    minReplica: 1,
    maxReplica: 1,
    repository: REPO,
    framework: "custom",
    image: vllmImage(),
  });
  hf.advance(2_500);
  const sponsor = await startSponsor({
    token: TOKEN,
    baseUrl: "unused",
    caPem: keyring.ca.certPem,
    target: [
      "    provider: huggingface-endpoint",
      "    endpoint: alice/llama",
      "    lifecycle: { managed: false }",
    ],
    engines: [
      "  - name: local-ollama",
      "    api: ollama",
      `    base_url: ${local.url}`,
      "    probe_interval_s: 0.2",
    ],
    providers: [
      "providers:",
      `  huggingface: { endpoints_api: ${hf.endpointsApiUrl}, hub_api: ${hf.hubApiUrl} }`,
    ],
    topLevel: aliases ? ["model_aliases:", `  ${ALIAS}: ["${TAG}", ${REPO}]`] : [],
  });
  defer(() => sponsor.close());
  await until(async () => {
    const rows = (await admin(sponsor, "/pair/v1/models")) as { model: string; nodes: string[] }[];
    return rows.some((r) => r.model === TAG) && rows.some((r) => r.model === REPO);
  });
  return { sponsor, local };
}

async function admin(s: Sponsor, path: string): Promise<unknown> {
  const res = await fetch(`${s.node.url}${path}`, {
    headers: { authorization: `Bearer ${s.node.adminToken}` },
  });
  return res.json();
}

const chat = (s: Sponsor, model: string, stream = false) =>
  chatReply(s.node.url, { model, stream, maxTokens: 3 }).then((r) => ({
    ...r,
    by: r.headers["x-pair-served-by"],
  }));

describe("model aliases across a local Ollama engine and a Hugging Face endpoint", () => {
  it("lists the alias; the local engine serves any name of the group; local down → the endpoint serves it by its repo id", async () => {
    const { sponsor, local } = await world();
    const models = (await (await fetch(`${sponsor.node.url}/v1/models`)).json()) as {
      data: { id: string }[];
    };
    expect(models.data.map((m) => m.id)).toEqual(expect.arrayContaining([ALIAS, TAG, REPO]));
    const tags = (await (await fetch(`${sponsor.node.url}/api/tags`)).json()) as {
      models: { name: string }[];
    };
    expect(tags.models.map((m) => m.name)).toContain(ALIAS);

    // Default policy (when-no-local-node): the local engine advertises the group, so it serves —
    // even a request naming the repo id.
    for (const asked of [ALIAS, REPO, TAG]) {
      const r = await chat(sponsor, asked);
      expect({ asked, status: r.status, by: r.by }).toEqual({ asked, status: 200, by: "sponsor" });
      expect((JSON.parse(r.text) as { model: string }).model).toBe(asked);
    }

    await local.close();
    const r = await chat(sponsor, ALIAS);
    expect({ status: r.status, by: r.by }).toEqual({ status: 200, by: "gpu-rent" });
    expect((JSON.parse(r.text) as { model: string }).model).toBe(ALIAS);
    const streamed = await chat(sponsor, TAG, true);
    expect({ status: streamed.status, by: streamed.by }).toEqual({ status: 200, by: "gpu-rent" });
    expect(streamed.text).not.toContain(REPO);
    expect(streamed.text).toContain(`"model":"${TAG}"`);
  });

  it("without model_aliases, names are exact: the repo id goes to the endpoint even with the local engine up", async () => {
    const { sponsor } = await world(false);
    expect((await chat(sponsor, ALIAS)).status).toBe(404);
    expect((await chat(sponsor, TAG)).by).toBe("sponsor");
    expect((await chat(sponsor, REPO)).by).toBe("gpu-rent");
  });
});
