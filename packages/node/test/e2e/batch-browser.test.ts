// No web page may start a batch: a cross-site upload (multipart/form-data is a "simple" request a
// page may send without a preflight) and a cross-site batch create are refused before anything is
// kept or run, and the rebinding Host too; the same requests with no Origin (curl, SDKs) work.
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCluster, type Cluster } from "./node-harness.js";

let c: Cluster;
beforeAll(async () => {
  c = await startCluster([{ name: "e1", api: "openai", models: ["m1"] }]);
});
afterAll(() => c.close());

function upload(headers: Record<string, string>): Promise<Response> {
  const form = new FormData();
  form.set("purpose", "batch");
  form.set(
    "file",
    new Blob(['{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{}}']),
    "a.jsonl",
  );
  return fetch(`${c.node.url}/v1/files`, { method: "POST", body: form, headers });
}

describe("the batch routes and browsers", () => {
  it("refuses a cross-site upload and create, and a rebinding Host; keeps nothing", async () => {
    const page = await upload({ origin: "https://evil.example", "sec-fetch-site": "cross-site" });
    expect(page.status).toBe(403);
    expect(((await page.json()) as { error: { code: string } }).error.code).toBe("origin_refused");
    const noOrigin = await upload({ "sec-fetch-site": "cross-site" });
    expect(noOrigin.status).toBe(403);
    const create = await fetch(`${c.node.url}/v1/batches`, {
      method: "POST",
      headers: { origin: "https://evil.example", "content-type": "text/plain" },
      body: JSON.stringify({
        input_file_id: "file-x",
        endpoint: "/v1/chat/completions",
        completion_window: "24h",
      }),
    });
    expect(create.status).toBe(403);
    // fetch may not set Host; undici's request may, as a rebinding page's browser does.
    const rebound = await request(`${c.node.url}/v1/batches`, { headers: { host: "evil.example:11434" } });
    await rebound.body.text();
    expect(rebound.statusCode).toBe(403);
    const files = (await (await fetch(`${c.node.url}/v1/files`)).json()) as { data: unknown[] };
    expect(files.data).toEqual([]);
    // The same upload as a script sends it is kept.
    expect((await upload({})).status).toBe(200);
  });
});
