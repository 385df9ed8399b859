// `pair doctor`: each check against the situations it names (probes stand in for the machine), and
// the command against a real loopback Ollama emulator that holds the client port.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startEngineEmulator } from "@pair/emulators";
import { parseConfig, type PairConfig } from "../../src/config/index.js";
import {
  checkBudgets,
  checkClientPort,
  checkCredentials,
  checkDataDir,
  checkEngines,
  checkNode,
  checkPeers,
  type DoctorProbes,
} from "../../src/doctor/doctor-checks.js";
import { runCli } from "./cli-harness.js";

const host = { homeDir: "/home/ada", hostName: "ada" };
const config = (yaml: string): PairConfig => parseConfig(yaml, "test.yaml", host);

function probes(over: Partial<DoctorProbes> = {}): DoctorProbes {
  return {
    platform: "linux",
    nodeVersion: "v24.11.0",
    httpGet: () => Promise.resolve(new Error("ECONNREFUSED")),
    exists: () => false,
    stat: () => undefined,
    uid: 1000,
    credentialStored: () => Promise.resolve(true),
    admin: () => Promise.resolve(undefined),
    ...over,
  };
}

const answering =
  (body: string, status = 200) =>
  () =>
    Promise.resolve({ status, body });

describe("checks", () => {
  it("node: the live lines pass, 20 fails", () => {
    expect(checkNode(probes()).status).toBe("ok");
    expect(checkNode(probes({ nodeVersion: "v22.12.0" })).status).toBe("ok");
    expect(checkNode(probes({ nodeVersion: "v20.19.0" }))).toMatchObject({ status: "fail" });
  });

  it("client port: PAIR, nothing, another program", async () => {
    const c = config("");
    expect((await checkClientPort(c, probes({ httpGet: answering("PAIR is running\n") }))).status).toBe("ok");
    expect((await checkClientPort(c, probes())).status).toBe("warn");
    expect(await checkClientPort(c, probes({ httpGet: answering("<html>", 404) }))).toMatchObject({
      status: "fail",
      detail: "another program answers on 127.0.0.1:11434 (HTTP 404)",
    });
  });

  it.each([
    [
      "linux",
      "/etc/systemd/system/ollama.service",
      /sudo systemctl edit ollama.*OLLAMA_HOST=127\.0\.0\.1:11435.*systemctl restart ollama/,
    ],
    ["darwin", "/Applications/Ollama.app", /launchctl setenv OLLAMA_HOST 127\.0\.0\.1:11435/],
    ["win32", "", /setx OLLAMA_HOST 127\.0\.0\.1:11435/],
    ["linux", "", /`OLLAMA_HOST=127\.0\.0\.1:11435 ollama serve`/],
  ] as const)(
    "client port held by Ollama on %s (%s): the move for that install",
    async (platform, file, fix) => {
      const r = await checkClientPort(
        config(""),
        probes({ platform, exists: (p) => p === file, httpGet: answering("Ollama is running") }),
      );
      expect(r.status).toBe("fail");
      expect(r.detail).toContain("Ollama holds 127.0.0.1:11434");
      expect(r.fix).toMatch(fix);
    },
  );

  it("engines: answering, refusing, wrong status", async () => {
    const c = config(
      "engines:\n  - { name: a, api: ollama, base_url: 'http://127.0.0.1:11435' }\n" +
        "  - { name: b, api: openai, base_url: 'http://127.0.0.1:8000/v1' }\n",
    );
    const seen: string[] = [];
    const results = await checkEngines(
      c,
      probes({
        httpGet: (url) => {
          seen.push(url);
          return Promise.resolve(
            url.includes("8000") ? { status: 500, body: "" } : new Error("ECONNREFUSED"),
          );
        },
      }),
    );
    expect(seen.sort()).toEqual(["http://127.0.0.1:11435/api/version", "http://127.0.0.1:8000/v1/models"]);
    expect(results.map((r) => r.status)).toEqual(["fail", "fail"]);
    expect(results[0]!.fix).toMatch(/OLLAMA_HOST=127\.0\.0\.1:11435 ollama serve/);
    expect(results[1]!.detail).toContain("HTTP 500");
  });

  const rented =
    "rented_nodes:\n  - name: gpu\n    provider: openai-compatible\n    base_url: https://example.com/v1\n" +
    "    credential: os-credential-store:pair/hf\n";

  it("credentials: stored, missing (with the set command), a locked store", async () => {
    const c = config(rented);
    expect((await checkCredentials(c, probes()))[0]).toMatchObject({
      check: "credential pair/hf",
      status: "ok",
    });
    const missing = (
      await checkCredentials(c, probes({ credentialStored: () => Promise.resolve(false) }))
    )[0];
    expect(missing).toMatchObject({ status: "fail", fix: "pair credential set pair/hf" });
    const locked = await checkCredentials(
      c,
      probes({
        credentialStored: () => Promise.resolve(new Error("credential_unavailable: the keyring is locked")),
      }),
    );
    expect(locked).toEqual([expect.objectContaining({ check: "credential store", status: "fail" })]);
    expect((await checkCredentials(config(""), probes()))[0]!.status).toBe("skip");
  });

  it("data dir: missing is fine, group-readable or someone else's is not", () => {
    const c = config("");
    expect(checkDataDir(c, probes())[0]!.status).toBe("ok");
    expect(checkDataDir(c, probes({ stat: () => ({ mode: 0o40700, uid: 1000 }) }))[0]!.status).toBe("ok");
    expect(checkDataDir(c, probes({ stat: () => ({ mode: 0o40755, uid: 1000 }) }))[0]).toMatchObject({
      status: "fail",
      fix: "chmod 700 /home/ada/.local/share/pair",
    });
    expect(checkDataDir(c, probes({ stat: () => ({ mode: 0o40700, uid: 0 }) }))[0]!.status).toBe("fail");
  });

  it("budgets: only nodes PAIR bills are checked; a cap passes", () => {
    expect(checkBudgets(config(rented))[0]!.status).toBe("skip");
    const managed = (budget: string) =>
      config(
        "rented_nodes:\n  - name: hf\n    provider: huggingface-endpoint\n    endpoint: ns/ep\n" +
          `    credential: os-credential-store:pair/hf\n    lifecycle: { managed: true }\n${budget}`,
      );
    expect(checkBudgets(managed("    budget: { usd_per_day: 5 }\n"))[0]).toMatchObject({
      status: "ok",
      detail: "$5/day",
    });
  });

  it("peers: up, down, none, no node", async () => {
    const admin = (rows: unknown) => () => Promise.resolve(rows);
    expect((await checkPeers(probes()))[0]!.status).toBe("skip");
    expect(
      (await checkPeers(probes({ admin: admin([{ name: "me", kind: "self", state: "up" }]) })))[0]!.status,
    ).toBe("skip");
    const results = await checkPeers(
      probes({
        admin: admin([
          { name: "b", kind: "peer", state: "up" },
          { name: "c", kind: "peer", state: "down", last_seen: "2030-01-01T00:00:00Z" },
        ]),
      }),
    );
    expect(results.map((r) => [r.check, r.status])).toEqual([
      ["peer b", "ok"],
      ["clock b", "skip"],
      ["peer c", "fail"],
    ]);
  });

  it("clocks: each up peer's offset within 2 s is ok, beyond it a warning, beyond 5 min a failure", async () => {
    const rows = [0, -1_500, 2_500, -3 * 60_000, 6 * 60_000].map((offset, i) => ({
      name: `p${i}`,
      kind: "peer",
      state: "up",
      clock_offset_ms: offset,
    }));
    const results = (await checkPeers(probes({ admin: () => Promise.resolve(rows) }))).filter((r) =>
      r.check.startsWith("clock "),
    );
    expect(results.map((r) => r.status)).toEqual(["ok", "ok", "warn", "warn", "fail"]);
    expect(results[3]!.detail).toBe(
      "p3's clock is 180.0 s behind this node's: logs and history of the two disagree",
    );
    expect(results[4]!.detail).toBe("p4's clock is 360.0 s ahead of this node's");
    expect(results[4]!.fix).toBe(
      "set the clocks from the network, here with `sudo timedatectl set-ntp true`, and the same on p4; then run pair doctor again",
    );
    expect(results[0]!.fix).toBeNull();
  });
});

describe("pair doctor on this machine", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "pair-doctor-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("finds an Ollama on the client port, says how to move it, and exits 1", async () => {
    const ollama = await startEngineEmulator({ api: "ollama", name: "o", models: [{ name: "m" }] });
    try {
      const port = new URL(ollama.url).port;
      const file = join(dir, "pair.yaml");
      writeFileSync(
        file,
        `node:\n  listen: 127.0.0.1:${port}\n  data_dir: ${join(dir, "data")}\n` +
          `engines:\n  - { name: o, api: ollama, base_url: '${ollama.url}' }\n`,
      );
      const r = await runCli(["doctor", "--config", file, "--json"]);
      expect(r.code).toBe(1);
      const results = JSON.parse(r.stdout) as { check: string; status: string; fix: string | null }[];
      const byCheck = Object.fromEntries(results.map((x) => [x.check, x]));
      expect(byCheck["client port"]).toMatchObject({ status: "fail" });
      expect(byCheck["client port"]!.fix).toMatch(/OLLAMA_HOST=127\.0\.0\.1:11435/);
      expect(byCheck["engine o"]).toMatchObject({ status: "ok" });
      expect(byCheck["data dir"]).toMatchObject({ status: "ok" });
      const text = await runCli(["doctor", "--config", file]);
      expect(text.stdout).toMatch(/^client port +FAIL +Ollama holds/m);
      expect(text.stdout).toContain("To fix:\n");
    } finally {
      await ollama.close();
    }
  });

  const configFor = (listenPort: string, engineUrl: string) => {
    const file = join(dir, "pair.yaml");
    mkdirSync(join(dir, "data"), { mode: 0o700 });
    writeFileSync(
      file,
      `node:\n  listen: 127.0.0.1:${listenPort}\n  data_dir: ${join(dir, "data")}\n` +
        `engines:\n  - { name: o, api: ollama, base_url: '${engineUrl}' }\n`,
    );
    return file;
  };

  it("exits 0 only when all is well, and 1 on a warning alone", async () => {
    const engine = await startEngineEmulator({ api: "ollama", name: "o", models: [{ name: "m" }] });
    // What a running node answers on its client port (the check reads only the root's text).
    const node = createServer((_req, res) => res.end("PAIR is running\n"));
    await new Promise<void>((done) => node.listen(0, "127.0.0.1", done));
    try {
      const port = String((node.address() as AddressInfo).port);
      const well = await runCli(["doctor", "--config", configFor(port, engine.url)]);
      expect(well.stdout).toMatch(/^client port +OK /m);
      expect(well.stdout.trimEnd().split("\n").at(-1)).toBe("All well.");
      expect(well.code).toBe(0);
      // No node on the client port: a warning, and the exit status says so.
      await new Promise<void>((done) => node.close(() => done()));
      const warned = await runCli(["doctor", "--config", join(dir, "pair.yaml")]);
      expect(warned.stdout).toMatch(/^client port +WARN +nothing answers/m);
      expect(warned.stdout.trimEnd().split("\n").at(-1)).toBe("1 warning: fix it and run pair doctor again.");
      expect(warned.code).toBe(1);
    } finally {
      node.close();
      await engine.close();
    }
  });
});
