// `pair rented create | catalog | hardware` against the Hugging Face emulator over HTTPS, with the real
// keyring and virtual time: a create goes through the hosting contract (ledger authorization, durable
// intent, private endpoint with HF scale-to-zero on), shows progress pending → initializing → running,
// and the model serves requests; no authorization → nothing is created; public is refused; a lost
// create answer is reconciled, never sent again; spend shows in `pair nodes --json` on the sponsor and
// its peer; a restart restores and adopts the created endpoint. The meter equals the ledger.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { liveRecords, openObligations } from "@pair/provision";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { runCli, startCli } from "../cli/cli-harness.js";
import { admin, joinWith, showPin, startTestNodeWith, type TestNode } from "../cluster/node-pair-harness.js";
import { cleanupAfterEach, until } from "../support/eventually.js";
import { keyringWorlds } from "../support/keyring-worlds.js";
import { createWorld, TOKEN, type CreateWorld } from "./create-harness.js";
import { expectLedgerCoversMeter, stretchMinutes } from "./meter-bound.js";
import { chatReply } from "../support/chat.js";

/** An admin answer: a node view, or `{error: {code, message}}`. */
interface Answer {
  readonly state?: string;
  readonly error?: { readonly code: string; readonly message: string; readonly param?: string };
  readonly created?: { readonly started_at: string } | null;
}
interface NodeRow {
  readonly name: string;
  readonly spend_usd?: { readonly session: number; readonly day: number; readonly month: number } | null;
}

const T4_MICRO_USD_PER_HOUR = 500_000;
const MODEL = "Qwen/Qwen3-0.6B";
const ENV = { PAIR_RENTED_POLL_MS: "20" };
const worlds = keyringWorlds<CreateWorld>();
// Registered after the worlds' hook, so it runs before it (vitest runs afterEach hooks last first).
const defer = cleanupAfterEach();

async function world(): Promise<CreateWorld> {
  const w = worlds.add(await createWorld(worlds.ca));
  await w.start();
  return w;
}

function cli(w: CreateWorld, args: readonly string[]) {
  return runCli([...args, "--config", w.configFile], { env: ENV });
}

/** Move virtual time in the background (5 s per 20 ms) until `done` settles. */
async function whileAdvancing<T>(w: CreateWorld, done: Promise<T>): Promise<T> {
  let finished = false;
  void done.finally(() => (finished = true));
  for (let i = 0; i < 1_000 && !finished; i += 1) {
    w.hf.advance(5_000);
    await new Promise((r) => setTimeout(r, 20));
  }
  return done;
}

/** `pair rented create ARGS`, followed to its end while virtual time moves; it must succeed. */
async function createFollowed(w: CreateWorld, args: readonly string[]) {
  const run = startCli(
    ["rented", "create", ...args, "--credential", w.credential, "--config", w.configFile],
    { env: ENV },
  );
  const result = await whileAdvancing(w, run.done);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return result;
}

async function rentedRow(w: CreateWorld, name: string): Promise<Record<string, unknown>> {
  const res = await request(`${w.node.url}/pair/v1/rented`, {
    headers: { authorization: `Bearer ${w.node.adminToken}` },
  });
  const rows = (await res.body.json()) as Record<string, unknown>[];
  return rows.find((r) => r["name"] === name) ?? {};
}

function post(w: CreateWorld, path: string, body: unknown) {
  return request(`${w.node.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${w.node.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  }).then(async (res) => ({ status: res.statusCode, json: (await res.body.json()) as Answer }));
}

const chat = (w: CreateWorld) => chatReply(w.node.url, { model: MODEL, maxTokens: 3 });

const T4_BODY = (w: CreateWorld, name: string, extra: Record<string, unknown> = {}) => ({
  name,
  provider: "huggingface-endpoint",
  credential: w.credential,
  repo: MODEL,
  vendor: "aws",
  region: "us-east-1",
  instance_type: "nvidia-t4",
  instance_size: "x1",
  budget: { unlimited: true },
  ...extra,
});

/**
 * The ledger against the emulator's meter at minute granularity: never under it, and at most one
 * billed minute per billing stretch over it (the cautious start, docs/ledger.md; meter-bound.ts).
 */
function meterMatchesLedger(w: CreateWorld, name: string): void {
  const minutes = stretchMinutes(w.hf, "alice", name);
  expectLedgerCoversMeter(w.node.managed.view(name)?.spend_usd?.total, minutes, T4_MICRO_USD_PER_HOUR);
}

describe("pair rented create", () => {
  it("creates a private endpoint through the CLI, shows pending → initializing → running, and serves the model", async () => {
    const w = await world();
    const result = await createFollowed(w, ["qwen-t4", "--repo", MODEL, "--gpu", "T4", "--usd-per-day", "5"]);
    const lines = result.stdout.trim().split("\n");
    expect(lines[0]).toContain(
      "creating qwen-t4: Qwen/Qwen3-0.6B on T4 x1 (aws/us-east-1, nvidia-t4, $0.50/h)",
    );
    expect(lines.slice(1).map((l) => l.split(" ")[0])).toEqual(["pending", "initializing", "running"]);
    expect(lines.at(-1)).toMatch(
      /^running \(\d+:\d\d, \$\d+\.\d\d\) — model Qwen\/Qwen3-0\.6B is in the cluster inventory$/,
    );

    // HF's side: private, scale-to-zero on (15 min) as the crash backstop, PAIR's marks.
    const endpoint = await w.api.getEndpoint("alice", "qwen-t4");
    expect(endpoint).toMatchObject({ accessType: "private", minReplica: 0, scaleToZeroTimeoutMin: 15 });
    expect(endpoint.tags.some((t) => t.startsWith("pair:owner="))).toBe(true);
    // An engine that serves /v1 (HF's default image is the Inference Toolkit, which does not).
    expect(w.hf.endpoints.get("alice", "qwen-t4")?.image).toEqual({
      vLLM: { url: "vllm/vllm-openai:v0.23.0", port: 8000, healthRoute: "/health" },
    });
    // The node persists as a managed huggingface-endpoint node with a credential reference only.
    const file = readFileSync(join(w.dataDir, "rented-nodes.json"), "utf8");
    expect(file).toContain('"endpoint": "alice/qwen-t4"');
    expect(file).toContain(w.credential);
    expect(file).not.toContain(TOKEN);
    const row = await rentedRow(w, "qwen-t4");
    expect(row).toMatchObject({
      state: "running",
      provider_state: "running",
      budget: { usd_per_day: 5, usd_per_month: null },
      managed: { managed: true, open_obligations: 1 },
    });
    expect(JSON.stringify(row)).not.toContain("https://");

    const answered = await chat(w);
    expect(answered.status).toBe(200);
    await w.node.managed.tick();
    meterMatchesLedger(w, "qwen-t4");
  });

  it("creates --catalog through the catalog's deploy: its engine and hardware, PAIR's rules, the real price", async () => {
    const w = await world();
    await createFollowed(w, ["qwen-cat", "--catalog", MODEL, "--gpu", "T4", "--usd-per-day", "5"]);
    expect(w.hf.faults.arrived({ method: "POST", path: "/api/catalog/deploy" })).toBe(1);
    expect(w.hf.faults.arrived({ method: "POST", path: /^\/v2\/endpoint\/alice$/ })).toBe(0);
    // The recipe's engine (not HF's default Toolkit) and hardware; PAIR's access, backstop and marks.
    const endpoint = await w.api.getEndpoint("alice", "qwen-cat");
    expect(endpoint).toMatchObject({ accessType: "private", minReplica: 0, scaleToZeroTimeoutMin: 15 });
    expect(endpoint).toMatchObject({ instanceType: "nvidia-l4", instanceSize: "x1" });
    expect(endpoint.tags.some((t) => t.startsWith("pair:owner="))).toBe(true);
    expect(w.hf.endpoints.get("alice", "qwen-cat")?.image).toMatchObject({ vLLM: { port: 8000 } });
    // Checked at the T4's $0.50/h before the deploy, budgeted at the L4's $0.80/h it runs on.
    expect(w.log.join("\n")).toContain(
      "the catalog's recipe runs at $0.8/h (the create was checked at $0.5/h)",
    );
    expect(w.node.managed.view("qwen-cat")).toMatchObject({ usd_per_hour: 0.8 });
    const res = await request(`${w.node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 3 }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-pair-served-by"]).toBe("qwen-cat");
    await res.body.dump();
  });

  it("refuses a create the ledger does not authorize: nothing is created on Hugging Face", async () => {
    const w = await world();
    // One billed minute of a T4 costs ~$0.0083: a $0.001 daily cap cannot authorize it.
    const result = await cli(w, [
      "rented",
      "create",
      "broke",
      "--repo",
      MODEL,
      "--gpu",
      "T4",
      "--usd-per-day",
      "0.001",
      "--credential",
      w.credential,
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("budget_exceeded");
    expect(await w.api.listEndpoints("alice")).toEqual([]);
    expect(await rentedRow(w, "broke")).toEqual({});
    const direct = await post(
      w,
      "/pair/v1/rented/create",
      T4_BODY(w, "broke", { budget: { usd_per_day: 0.001 } }),
    );
    expect(direct.status).toBe(429);
    expect(direct.json.error?.code).toBe("budget_exceeded");
  });

  it("deploys --image's pinned vLLM image instead of the default; an unpinned image is refused", async () => {
    const w = await world();
    const unpinned = await post(
      w,
      "/pair/v1/rented/create",
      T4_BODY(w, "floating", { image: "vllm/vllm-openai:latest", budget: { usd_per_day: 5 } }),
    );
    expect(unpinned.status).toBe(400);
    expect(unpinned.json.error).toMatchObject({ code: "invalid_value", param: "image" });
    expect(w.hf.endpoints.get("alice", "floating")).toBeUndefined();
    const pinned = await post(
      w,
      "/pair/v1/rented/create",
      T4_BODY(w, "pinned", { image: "vllm/vllm-openai:v0.24.1", budget: { usd_per_day: 5 } }),
    );
    expect(pinned.status).toBeLessThan(300);
    expect(w.hf.endpoints.get("alice", "pinned")?.image).toEqual({
      vLLM: { url: "vllm/vllm-openai:v0.24.1", port: 8000, healthRoute: "/health" },
    });
  });

  it("refuses a public endpoint before anything is sent", async () => {
    const w = await world();
    const direct = await post(w, "/pair/v1/rented/create", T4_BODY(w, "open", { access: "public" }));
    expect(direct.status).toBe(400);
    expect(direct.json.error?.code).toBe("public_endpoint_refused");
    const viaCli = await cli(w, [
      "rented",
      "create",
      "open",
      "--repo",
      MODEL,
      "--gpu",
      "T4",
      "--access",
      "public",
    ]);
    expect(viaCli.code).toBe(2);
    expect(viaCli.stderr).toContain("never creates a public endpoint");
    expect(await w.api.listEndpoints("alice")).toEqual([]);
  });

  it("refuses a create with no budget before anything is sent (budget_required; the CLI: exit 2)", async () => {
    const w = await world();
    const direct = await post(w, "/pair/v1/rented/create", T4_BODY(w, "free", { budget: {} }));
    expect(direct.status).toBe(400);
    expect(direct.json.error?.code).toBe("budget_required");
    const both = await post(
      w,
      "/pair/v1/rented/create",
      T4_BODY(w, "free", { budget: { unlimited: true, usd_per_day: 1 } }),
    );
    expect(both.status).toBe(400);
    expect(both.json.error?.param).toBe("budget");
    const viaCli = await cli(w, ["rented", "create", "free", "--repo", MODEL, "--gpu", "T4"]);
    expect(viaCli.code).toBe(2);
    expect(viaCli.stderr).toContain("--usd-per-day N");
    expect(viaCli.stderr).toContain("--unlimited");
    const contradictory = await cli(w, [
      ...["rented", "create", "free", "--repo", MODEL, "--gpu", "T4"],
      ...["--usd-per-day", "1", "--unlimited"],
    ]);
    expect(contradictory.code).toBe(2);
    expect(await w.api.listEndpoints("alice")).toEqual([]);
    expect(await rentedRow(w, "free")).toEqual({});
  });

  it("a lost create answer is Uncertain, reconciled from the listing, and never sent again", async () => {
    const w = await world();
    w.hf.faults.loseAnswers(1, { method: "POST", path: /^\/v2\/endpoint\/alice$/ });
    const created = await post(
      w,
      "/pair/v1/rented/create",
      T4_BODY(w, "lost-one", { budget: { usd_per_day: 5 } }),
    );
    expect(created.status).toBe(202);
    expect(created.json.state).toBe("starting");
    // A second create would consume this failure; PAIR must not send one.
    w.hf.faults.failNext(1, 503, { method: "POST", path: /^\/v2\/endpoint\/alice$/ });
    for (let i = 0; i < 20; i += 1) {
      w.hf.advance(10_000);
      await w.node.managed.tick();
    }
    const node = w.node.managed.node("lost-one")!;
    const [live] = liveRecords(node.controller.state);
    expect(live?.key?.name).toBe("lost-one");
    expect(live?.intent?.answer).toBe("lost");
    expect(openObligations(node.controller.state)).toHaveLength(1);
    expect((await w.api.listEndpoints("alice")).map((e) => e.name)).toEqual(["lost-one"]);
    await expect(
      w.api.createEndpoint("alice", {
        name: "probe",
        accessType: "private",
        vendor: "aws",
        region: "us-east-1",
        accelerator: "gpu",
        instanceType: "nvidia-t4",
        instanceSize: "x1",
        minReplica: 0,
        maxReplica: 1,
        repository: MODEL,
      }),
    ).rejects.toThrow(); // the armed 503 was still there: PAIR sent no second create
    await until(async () => (await rentedRow(w, "lost-one"))["state"] === "running");
    meterMatchesLedger(w, "lost-one");
  });

  it("lists the catalog and the hardware (table and --json); an unknown or ambiguous GPU names the choices", async () => {
    const w = await world();
    const catalog = await cli(w, ["rented", "catalog", "--credential", w.credential]);
    expect(catalog.code).toBe(0);
    expect(catalog.stdout).toContain(MODEL);
    const catalogJson = JSON.parse(
      (await cli(w, ["rented", "catalog", "--json", "--credential", w.credential])).stdout,
    ) as unknown;
    expect(catalogJson).toContainEqual({ repo_id: MODEL });

    const table = await cli(w, ["rented", "hardware", "--credential", w.credential]);
    expect(table.code).toBe(0);
    const [header, ...rows] = table.stdout.trim().split("\n");
    expect(header?.split(/\s{2,}/)).toEqual([
      "GPU",
      "COUNT",
      "VRAM",
      "$/HR",
      "QUOTA",
      "VENDOR/REGION",
      "INSTANCE",
    ]);
    expect(rows.some((r) => /^L4\s+1\s+24 GB\s+0\.80\s+\d+\s+aws\/us-east-1\s+nvidia-l4 x1$/.test(r))).toBe(
      true,
    );
    const hardware = JSON.parse(
      (await cli(w, ["rented", "hardware", "--json", "--credential", w.credential])).stdout,
    ) as unknown;
    expect(hardware).toContainEqual(
      expect.objectContaining({ gpu: "T4", instance_type: "nvidia-t4", usd_per_hour: 0.5, vram_gb: 16 }),
    );

    const unknown = await cli(w, [
      "rented",
      "create",
      "x1",
      "--repo",
      MODEL,
      "--gpu",
      "B300",
      "--usd-per-day",
      "1",
      "--credential",
      w.credential,
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown GPU "B300"');
    expect(unknown.stderr).toContain("L4, L40S");
    const ambiguous = await cli(w, [
      "rented",
      "create",
      "x1",
      "--repo",
      MODEL,
      "--gpu",
      "L4",
      "--usd-per-day",
      "1",
      "--credential",
      w.credential,
    ]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain("more than one L4 offer");
    expect(ambiguous.stderr).toContain("aws/eu-west-1");
    expect(await w.api.listEndpoints("alice")).toEqual([]);

    const account = await request(
      `${w.node.url}/pair/v1/rented/account?credential=${encodeURIComponent(w.credential)}`,
      {
        headers: { authorization: `Bearer ${w.node.adminToken}` },
      },
    );
    expect(await account.body.json()).toEqual({
      credential: w.credential,
      signed_in: true,
      namespace: "alice",
      account_type: "user",
      message: null,
    });
    const missing = await request(
      `${w.node.url}/pair/v1/rented/account?credential=os-credential-store:pair/not-there-${Date.now()}`,
      {
        headers: { authorization: `Bearer ${w.node.adminToken}` },
      },
    );
    const missingJson = (await missing.body.json()) as Record<string, unknown>;
    expect(missingJson["signed_in"]).toBe(false);
    expect(String(missingJson["message"])).toContain("pair credential set");
  });

  it("pair rented resume shows a live line on a terminal (state, time, cost) until the node serves", async () => {
    const w = await world();
    expect((await post(w, "/pair/v1/rented/create", T4_BODY(w, "t4"))).status).toBe(202);
    await whileAdvancing(
      w,
      until(async () => (await rentedRow(w, "t4"))["state"] === "running", 20_000),
    );
    expect(
      (
        await whileAdvancing(
          w,
          cli(w, ["rented", "pause", "t4"]).then((r) => r),
        )
      ).code,
    ).toBe(0);
    expect(w.hf.endpoints.get("alice", "t4")?.state).toBe("paused");

    const run = startCli(["rented", "resume", "t4", "--config", w.configFile], {
      env: ENV,
      stdoutIsTerminal: true,
    });
    const result = await whileAdvancing(w, run.done);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const [live = "", table = ""] = result.stdout.split(/\n(?=NAME)/);
    const shown = live.split(/\r\u001b\[K|\n/).filter((t) => t !== "");
    expect(shown.length).toBeGreaterThan(1);
    for (const text of shown.slice(0, -1))
      expect(text).toMatch(/^resuming t4: (paused|pending|initializing) \(\d+:\d\d, \$\d+\.\d\d\)$/);
    expect(shown.at(-1)).toMatch(
      /^resuming t4: running \(\d+:\d\d, \$\d+\.\d\d\) — model Qwen\/Qwen3-0\.6B is in the cluster inventory$/,
    );
    expect(live).toMatch(/^\r\u001b\[K/);
    expect(table).toMatch(/^NAME +PROVIDER +STATE/);
    expect(result.stdout).toMatch(/^t4 +huggingface-endpoint +running /m);
  });

  it("shows spend in pair nodes --json on the sponsor and on its peer; a restart restores and adopts the endpoint", async () => {
    const w = await world();
    const created = await post(
      w,
      "/pair/v1/rented/create",
      T4_BODY(w, "shared-t4", {
        budget: { usd_per_day: 5 },
        share_with_cluster: true,
        lifecycle: { pause_on_sponsor_exit: false },
      }),
    );
    expect(created.status).toBe(202);
    await whileAdvancing(
      w,
      until(async () => (await rentedRow(w, "shared-t4"))["state"] === "running", 20_000),
    );
    await w.node.managed.tick();

    const own = JSON.parse((await cli(w, ["nodes", "--json"])).stdout) as NodeRow[];
    const mine = own.find((n) => n["name"] === "shared-t4");
    expect(mine?.spend_usd?.day).toBeGreaterThan(0);
    expect(Object.keys(mine?.spend_usd ?? {}).sort()).toEqual(["day", "month", "session"]);
    const table = await cli(w, ["nodes"]);
    expect(table.stdout).toMatch(/shared-t4.*\$\d+\.\d\d today/);
    // /metrics has the same spend, as a counter by node, and the node's state.
    const metrics = await (await request(`${w.node.url}/metrics`)).body.text();
    const spent = /^pair_rented_spend_usd_total\{node="shared-t4"\} ([\d.e-]+)$/m.exec(metrics)?.[1];
    expect(Number(spent)).toBeCloseTo(w.node.managed.view("shared-t4")?.spend_usd?.total ?? -1, 6);
    expect(Number(spent)).toBeGreaterThan(0);
    expect(metrics).toContain('pair_rented_state{node="shared-t4",state="running"} 1\n');

    const laptop = await startTestNodeWith("laptop", { refreshMs: 150, timeoutMs: 400 });
    defer(() => laptop.close());
    const shower = { node: w.node, clusterAddress: `127.0.0.1:${w.node.cluster.port}` } as TestNode;
    expect((await joinWith(laptop, shower, await showPin(shower))).status).toBe(200);
    await until(async () => {
      const rows = (await admin(laptop, "/pair/v1/nodes")).json as NodeRow[];
      return rows.some((r) => r.name === "shared-t4" && (r.spend_usd?.day ?? 0) > 0);
    }, 10_000);
    const peerRow = ((await admin(laptop, "/pair/v1/nodes")).json as NodeRow[]).find(
      (r) => r["name"] === "shared-t4",
    );
    expect(peerRow?.spend_usd).toEqual(mine?.spend_usd);
    expect(JSON.stringify(peerRow)).not.toContain("https://");

    // Restart (no pause at exit): the node is restored from rented-nodes.json and SQLite, adopted by key.
    const before = w.node.managed.node("shared-t4")!;
    const [spell] = liveRecords(before.controller.state);
    await w.node.close(200);
    expect(w.hf.endpoints.get("alice", "shared-t4")?.state).toBe("running");
    await w.start();
    const after = w.node.managed.node("shared-t4");
    expect(after).toBeDefined();
    expect(Object.keys(after!.controller.state.deployments)).toEqual([spell?.id]);
    await w.node.managed.tick();
    expect(liveRecords(after!.controller.state)[0]?.key).toEqual(spell?.key);
    const row = await rentedRow(w, "shared-t4");
    expect(row["created"]).toMatchObject({
      started_at: created.json.created?.started_at,
    });
    expect((await chat(w)).status).toBe(200);
    await w.node.managed.tick();
    meterMatchesLedger(w, "shared-t4");
  });
});
