// Rented nodes, slice 1: an existing HTTPS endpoint attached to a sponsor, its token only in the
// sponsor's OS credential store, shared with peers only through the sponsor over mTLS.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { PEER_INVENTORY_PATH } from "../../src/cluster-node/index.js";
import type { WorkloadJson } from "../../src/history/workload-history.js";
import { RENTED_FILE, RENTED_PEER_VIEW_FIELDS } from "@pair/sponsor";
import { runCli } from "../cli/cli-harness.js";
import {
  admin,
  agentBetween,
  joinWith,
  showPin,
  startTestNodeWith,
  type TestNode,
} from "../cluster/node-pair-harness.js";
import {
  sponsorAsTestNode,
  startRentedEndpoint,
  startSponsor,
  type RentedEndpoint,
  type Sponsor,
} from "./rented-harness.js";
import { cleanupAfterEach, until } from "../support/eventually.js";
import { fakeHfToken } from "../support/fake-token.js";
import { keyringCa } from "../support/keyring-worlds.js";
import { postChat } from "../support/chat.js";

const TOKEN = fakeHfToken();
const CLIENT_TOKEN = "sk-clientSentSecret0123456789abcdefABCD";

const defer = cleanupAfterEach();
const keyring = keyringCa();

async function endpoint(options: Parameters<typeof startRentedEndpoint>[1] = { apiKey: TOKEN }) {
  const e = await startRentedEndpoint(keyring.ca, options);
  defer(() => e.engine.close());
  return e;
}

async function sponsorOf(
  e: RentedEndpoint,
  options: { share?: boolean; coldStartS?: number; models?: readonly string[] } = {},
) {
  const s = await startSponsor({ token: TOKEN, baseUrl: e.baseUrl, caPem: keyring.ca.certPem, ...options });
  defer(() => s.close());
  return s;
}

async function peerOf(s: Sponsor): Promise<TestNode> {
  const peer = await startTestNodeWith("laptop", { refreshMs: 150, timeoutMs: 400 });
  defer(() => peer.close());
  const joined = await joinWith(peer, sponsorAsTestNode(s), await showPin(sponsorAsTestNode(s)));
  expect(joined.status).toBe(200);
  return peer;
}

async function rentedRow(n: TestNode, name = "gpu-rent"): Promise<Record<string, unknown> | undefined> {
  const rows = (await admin(n, "/pair/v1/nodes")).json as Record<string, unknown>[];
  return rows.find((r) => r["name"] === name);
}

const chat = (url: string, model: string, headers: Record<string, string> = {}, stream = true) =>
  postChat(url, { model, headers, stream });

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe("a rented node attached to a sponsor", () => {
  it("serves the sponsor's callers over verified HTTPS with the token from the credential store, labelled off-LAN", async () => {
    const e = await endpoint();
    const s = await sponsorOf(e);
    const sponsor = sponsorAsTestNode(s);
    await until(async () => (await rentedRow(sponsor))?.["state"] === "running");
    expect(await rentedRow(sponsor)).toMatchObject({
      kind: "rented",
      label: "Rented · off-LAN",
      provider: "openai-compatible",
      models: ["llama-70b"],
      shared: false,
      sponsor: "sponsor",
      eligible: true,
      off_lan: true,
      // An attached URL says nothing of its hardware: no GPU is invented for it.
      gpu: null,
    });

    // `pair nodes` shows it labelled off-LAN, with its sponsor, on the sponsor itself.
    const table = await runCli(["nodes", "--config", s.configFile]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(
      /\ngpu-rent +Rented · off-LAN +running +- +via sponsor +llama-70b \[not shared\]\n/,
    );

    // A client's own Authorization header never reaches the rented node: the sponsor's token does.
    const res = await chat(s.node.url, "llama-70b", { authorization: `Bearer ${CLIENT_TOKEN}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-pair-served-by"]).toBe("gpu-rent");
    expect(res.headers["x-pair-off-lan"]).toBe("1");
    expect(await res.body.text()).toMatch(/data: \[DONE\]/);
    expect(e.seenAuthorization).toEqual([`Bearer ${TOKEN}`]);

    await until(async () => ((await admin(sponsor, "/pair/v1/history")).json as unknown[]).length === 1);
    const [row] = (await admin(sponsor, "/pair/v1/history")).json as WorkloadJson[];
    expect(row).toMatchObject({
      origin_node: "sponsor",
      serving_node: "gpu-rent",
      sponsor: "sponsor",
      off_lan: true,
      status: "completed",
      attempts: [{ target: "rented node gpu-rent" }],
    });
    expect(row?.first_byte_ms).not.toBeNull();
  });

  it("is refused to peers until shared (rented_node_not_shared), then reached only through the sponsor; both record it", async () => {
    const e = await endpoint();
    const s = await sponsorOf(e);
    const laptop = await peerOf(s);
    await until(async () => (await rentedRow(laptop))?.["state"] === "running");
    expect(await rentedRow(laptop)).toMatchObject({ sponsor: "sponsor", shared: false, off_lan: true });

    const refused = await chat(laptop.node.url, "llama-70b", {}, false);
    expect(refused.statusCode).toBe(403);
    const body = (await refused.body.json()) as { error: { code: string; node: string; message: string } };
    expect(body.error).toMatchObject({ code: "rented_node_not_shared", node: "gpu-rent" });
    expect(body.error.message).toMatch(/pair rented share gpu-rent on/);
    expect(e.seenAuthorization).toEqual([]);

    // `pair rented share` on the sponsor takes effect without a restart, and reaches the peer at once.
    const shared = await runCli(["rented", "share", "gpu-rent", "on", "--config", s.configFile]);
    expect(shared).toMatchObject({ code: 0 });
    await until(async () => (await rentedRow(laptop))?.["shared"] === true);

    const res = await chat(laptop.node.url, "llama-70b", { authorization: `Bearer ${CLIENT_TOKEN}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-pair-served-by"]).toBe("gpu-rent");
    expect(res.headers["x-pair-off-lan"]).toBe("1");
    expect(await res.body.text()).toMatch(/data: \[DONE\]/);
    expect(e.seenAuthorization).toEqual([`Bearer ${TOKEN}`]);

    const sponsor = sponsorAsTestNode(s);
    await until(async () => ((await admin(laptop, "/pair/v1/history")).json as unknown[]).length === 2);
    const [peerRow] = (await admin(laptop, "/pair/v1/history")).json as WorkloadJson[];
    expect(peerRow).toMatchObject({
      origin_node: "laptop",
      serving_node: "gpu-rent",
      sponsor: "sponsor",
      off_lan: true,
      status: "completed",
    });
    // The refusal was the laptop's own (it knew from the sponsor's inventory): the sponsor saw one request.
    await until(async () => ((await admin(sponsor, "/pair/v1/history")).json as unknown[]).length === 1);
    const [sponsorRow] = (await admin(sponsor, "/pair/v1/history")).json as WorkloadJson[];
    expect(sponsorRow).toMatchObject({
      origin_node: "laptop",
      serving_node: "gpu-rent",
      sponsor: "sponsor",
      off_lan: true,
      status: "completed",
    });
  });

  it("tells peers name, state, models and sharing — never its URL or its token", async () => {
    expect(
      RENTED_PEER_VIEW_FIELDS.filter((f) => /url|token|credential|secret|key|host|endpoint/i.test(f)),
    ).toEqual([]);
    const e = await endpoint();
    const s = await sponsorOf(e);
    const laptop = await peerOf(s);
    await until(async () => (await rentedRow(laptop))?.["state"] === "running");
    const agent = agentBetween(laptop, sponsorAsTestNode(s));
    try {
      const res = await request(`https://127.0.0.1:${s.node.cluster.port}${PEER_INVENTORY_PATH}`, {
        dispatcher: agent,
      });
      const text = await res.body.text();
      const inventory = JSON.parse(text) as { rented: Record<string, unknown>[] };
      expect(Object.keys(inventory.rented[0] ?? {})).toEqual([...RENTED_PEER_VIEW_FIELDS]);
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(e.baseUrl);
      expect(text).not.toContain(String(e.engine.port));
    } finally {
      await agent.close();
    }
  });

  it("shows on /metrics the rented node's state, its peer, the tokens it served and the process", async () => {
    const e = await endpoint();
    const s = await sponsorOf(e, { share: true });
    const laptop = await peerOf(s);
    await until(async () => (await rentedRow(laptop))?.["eligible"] === true);
    const res = await chat(s.node.url, "llama-70b", {}, false);
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    await until(async () =>
      (await (await fetch(`${s.node.url}/metrics`)).text()).includes("pair_tokens_total"),
    );
    const text = await (await fetch(`${s.node.url}/metrics`)).text();
    expect(text).toContain('pair_rented_state{node="gpu-rent",state="running"} 1\n');
    expect(text).toContain('pair_peer_up{peer="laptop"} 1\n');
    expect(text).toMatch(
      /^pair_tokens_total\{direction="out",model="llama-70b",node="gpu-rent"\} [1-9]\d*$/m,
    );
    expect(text).toMatch(/^pair_build_info\{node_version="v\d+\.\d+\.\d+",version="[\d.]+"\} 1$/m);
    expect(text).toMatch(/^process_cpu_seconds_total [\d.e-]+$/m);
    expect(text).toMatch(/^process_resident_memory_bytes [1-9]\d*$/m);
    expect(text).toMatch(/^nodejs_heap_bytes\{kind="used"\} [1-9]\d*$/m);
    // The loop's delay covers the time since the last scrape: present once libuv took a sample.
    await until(async () =>
      /^nodejs_eventloop_delay_seconds\{quantile="0\.99"\} [\d.e-]+$/m.test(
        await (await fetch(`${s.node.url}/metrics`)).text(),
      ),
    );
    // The peer that goes away shows down at the next refresh.
    await laptop.close();
    await until(async () =>
      (await (await fetch(`${s.node.url}/metrics`)).text()).includes('pair_peer_up{peer="laptop"} 0'),
    );
  });

  it("leaves the token nowhere but the sponsor's credential store: no file, log or output of any node", async () => {
    const e = await endpoint();
    const s = await sponsorOf(e, { share: true });
    const laptop = await peerOf(s);
    await until(async () => (await rentedRow(laptop))?.["eligible"] === true);
    for (const url of [s.node.url, laptop.node.url]) {
      const res = await chat(url, "llama-70b", { authorization: `Bearer ${CLIENT_TOKEN}` });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
    }
    const nodes = await runCli(["nodes", "--json", "--config", s.configFile]);
    const history = await runCli(["history", "--json", "--config", laptop.configFile]);
    const metrics = await (await fetch(`${s.node.url}/metrics`)).text();
    // Flush both histories to disk, then search everything either node wrote.
    await laptop.node.close(500);
    await s.node.close(500);
    const texts = [
      ...filesUnder(s.dir).map((f) => readFileSync(f)),
      ...filesUnder(laptop.dataDir).map((f) => readFileSync(f)),
      Buffer.from(s.log.join("\n")),
      Buffer.from(laptop.log.join("\n")),
      Buffer.from(JSON.stringify([nodes, history, metrics])),
    ];
    for (const secret of [TOKEN, CLIENT_TOKEN])
      for (const text of texts) expect(text.includes(Buffer.from(secret))).toBe(false);
    expect(filesUnder(s.dir).some((f) => f.endsWith("history.db"))).toBe(true);
  });

  it("reports a refused credential as credential_rejected, naming the node and what to do", async () => {
    const e = await endpoint({ apiKey: "a-different-key-the-sponsor-does-not-have" });
    const s = await sponsorOf(e);
    const sponsor = sponsorAsTestNode(s);
    await until(async () => (await rentedRow(sponsor))?.["state"] === "credential_rejected");
    expect((await rentedRow(sponsor))?.["eligible"]).toBe(false);
    const rented = (await admin(sponsor, "/pair/v1/rented")).json as { reason: string }[];
    expect(rented[0]?.reason).toMatch(/credential rejected.*401/);
  });

  it("warns when the endpoint answers without a credential", async () => {
    const e = await endpoint({});
    const s = await sponsorOf(e);
    const sponsor = sponsorAsTestNode(s);
    await until(async () => (await rentedRow(sponsor))?.["state"] === "running");
    const row = await rentedRow(sponsor);
    expect(row?.["warnings"]).toEqual([expect.stringMatching(/without a credential/)]);
    expect(s.log.some((l) => /gpu-rent: warning: .*without a credential/.test(l))).toBe(true);
  });

  it("treats 503 before the first byte as warming within the cold-start budget, then cold_start_timeout", async () => {
    const e = await endpoint();
    const s = await sponsorOf(e, { coldStartS: 3 });
    const sponsor = sponsorAsTestNode(s);
    await until(async () => (await rentedRow(sponsor))?.["state"] === "running");
    await e.engine.setFaults({ failBeforeFirstByte: { status: 503 } });
    const pending = chat(s.node.url, "llama-70b", {}, false);
    // The job shows as warming while the node "starts".
    await until(
      async () => ((await admin(sponsor, "/pair/v1/jobs")).json as WorkloadJson[])[0]?.warming === true,
    );
    await e.engine.setFaults({});
    const res = await pending;
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-pair-served-by"]).toBe("gpu-rent");
    await res.body.dump();
    // The node was never marked unhealthy for it.
    expect((await rentedRow(sponsor))?.["eligible"]).toBe(true);
    // The log says when the wait began and how long it lasted (issue 29), naming the node only.
    const waits = s.log.filter((l) => l.includes("warm"));
    expect(waits).toEqual([
      expect.stringMatching(/^request [\w-]+ waits for rented node gpu-rent to warm up$/),
      expect.stringMatching(/^request [\w-]+: rented node gpu-rent answered after \d+ ms of warming$/),
    ]);

    await e.engine.setFaults({ failBeforeFirstByte: { status: 503 } });
    const started = Date.now();
    const late = await chat(s.node.url, "llama-70b", {}, false);
    expect(late.statusCode).toBe(504);
    expect(((await late.body.json()) as { error: { code: string } }).error.code).toBe("cold_start_timeout");
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
    const gaveUp = s.log.filter((l) => l.includes("given up"));
    expect(gaveUp).toEqual([
      expect.stringMatching(
        /: rented node gpu-rent given up \(cold_start_timeout\) after (\d+) ms of warming$/,
      ),
    ]);
    expect(Number(/after (\d+) ms/.exec(gaveUp[0]!)![1])).toBeGreaterThanOrEqual(2_900);
  });

  it("attaches at run time with `pair rented attach`, persisted without a secret; refuses http:// and literal tokens", async () => {
    const e = await endpoint();
    const s = await sponsorOf(e);
    const other = await endpoint({ apiKey: TOKEN, models: ["mixtral"] });
    const attached = await runCli([
      "rented",
      "attach",
      "gpu-two",
      "--provider",
      "openai-compatible",
      "--base-url",
      other.baseUrl,
      "--credential",
      `os-credential-store:${s.credential.service}/${s.credential.account}`,
      "--json",
      "--config",
      s.configFile,
    ]);
    expect(attached.code).toBe(0);
    expect(JSON.parse(attached.stdout)).toMatchObject({
      name: "gpu-two",
      state: "running",
      models: ["mixtral"],
    });
    const file = readFileSync(join(s.dataDir, RENTED_FILE), "utf8");
    expect(file).toContain("gpu-two");
    expect(file).not.toContain(TOKEN);
    const res = await chat(s.node.url, "mixtral", {}, false);
    expect(res.headers["x-pair-served-by"]).toBe("gpu-two");
    await res.body.dump();

    const insecure = await runCli([
      "rented",
      "attach",
      "gpu-three",
      "--provider",
      "openai-compatible",
      "--base-url",
      "http://gpu.example.com/v1",
      "--config",
      s.configFile,
    ]);
    expect(insecure.code).toBe(1);
    expect(insecure.stderr).toMatch(/insecure_url/);
    const literal = await runCli([
      "rented",
      "attach",
      "gpu-four",
      "--provider",
      "openai-compatible",
      "--base-url",
      other.baseUrl,
      "--credential",
      TOKEN,
      "--config",
      s.configFile,
    ]);
    expect(literal.code).toBe(1);
    expect(literal.stderr).toMatch(/literal_credential/);
    expect(literal.stderr).not.toContain(TOKEN);
  });

  it("serves only the models its allowlist names", async () => {
    const e = await endpoint({ apiKey: TOKEN, models: ["llama-70b", "mixtral"] });
    const s = await sponsorOf(e, { models: ["mixtral"] });
    const sponsor = sponsorAsTestNode(s);
    await until(async () => (await rentedRow(sponsor))?.["state"] === "running");
    expect(await rentedRow(sponsor)).toMatchObject({ models: ["mixtral"] });
    const allowed = await chat(s.node.url, "mixtral", {}, false);
    expect(allowed.statusCode).toBe(200);
    await allowed.body.dump();
    const refused = await chat(s.node.url, "llama-70b", {}, false);
    expect(refused.statusCode).toBe(404);
    expect(((await refused.body.json()) as { error: { code: string } }).error.code).toBe("model_not_found");
    expect(e.seenAuthorization).toHaveLength(1);
  });
});
