// `pair` without a node: help, version, usage errors (exit 2), config refusals and "not running" (exit 1).
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/main.js";
import { PAIR_VERSION } from "../../src/node.js";
import { freePort, runCli, writeConfig } from "./cli-harness.js";

describe("help and version", () => {
  it("prints the version", async () => {
    expect(await runCli(["--version"])).toEqual({ code: 0, stdout: `pair ${PAIR_VERSION}\n`, stderr: "" });
  });

  it.each([["--help"], ["-h"], ["help"]])("%s lists every command on stdout", async (flag) => {
    const r = await runCli([flag]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    for (const c of COMMANDS) expect(r.stdout).toContain(`  ${c.name}`);
  });

  it.each(COMMANDS.map((c) => [c.name]))("pair %s --help prints its usage on stdout", async (name) => {
    for (const argv of [
      [name, "--help"],
      [name, "-h"],
      ["help", name],
    ]) {
      const r = await runCli(argv);
      expect(r).toMatchObject({ code: 0, stderr: "" });
      expect(r.stdout).toMatch(new RegExp(`^Usage: pair ${name}`));
    }
  });
});

describe("usage errors exit 2 with usage on stderr", () => {
  it.each([
    [[], /no command given/],
    [["frobnicate"], /unknown command "frobnicate"/],
    [["--frob"], /unknown option "--frob"/],
    [["help", "frobnicate"], /no help for unknown command/],
    [["status", "--bogus"], /Unknown option '--bogus'/],
    [["models", "extra"], /Unexpected argument 'extra'/],
    [["history", "--limit", "0"], /--limit: expected a whole number from 1 to 100000/],
    [["history", "--limit"], /--limit/],
    [["history", "--since", "yesterday"], /--since: "yesterday": expected an ISO date\/time/],
    [["history", "--since", "2025-02-30"], /not a valid date/],
    [["demo", "--port", "11434"], /11434 is PAIR's own port/],
    [["demo", "--port", "70000"], /--port: expected a whole number from 0 to 65535/],
    [["serve", "--jsn"], /Unknown option '--jsn'/],
  ])("pair %j", async (argv, message) => {
    const r = await runCli(argv);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/Usage: pair/);
  });
});

describe("failures exit 1 naming what failed and what to do", () => {
  it("a refused config names the key's path and code", async () => {
    const c = writeConfig("node:\n  listen: nowhere\n  colour: blue\n");
    try {
      for (const command of ["serve", "status", "history"]) {
        const r = await runCli([command, "--config", c.file]);
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(`${c.file}:2:11: node.listen: invalid_value:`);
        expect(r.stderr).toContain(`${c.file}:3:3: node.colour: unknown_key:`);
        expect(r.stderr).toMatch(/Fix the config file/);
      }
    } finally {
      c.cleanup();
    }
  });

  it("a named config file that does not exist (via $PAIR_CONFIG)", async () => {
    const r = await runCli(["models"], { env: { PAIR_CONFIG: "/nonexistent/pair.yaml" } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /file_not_found: no config file at \/nonexistent\/pair.yaml \(named by \$PAIR_CONFIG\)/,
    );
  });

  it("no node running: names the address and says to start one", async () => {
    const port = await freePort();
    const c = writeConfig(`node:\n  listen: 127.0.0.1:${port}\n  data_dir: /nonexistent/pair-data\n`);
    try {
      for (const command of ["status", "models", "jobs", "history"]) {
        const r = await runCli([command, "--config", c.file]);
        expect(r.code).toBe(1);
        expect(r.stdout).toBe("");
        expect(r.stderr).toContain(
          `pair ${command}: no PAIR node answers on 127.0.0.1:${port} — start one with \`pair serve\``,
        );
        expect(r.stderr).toContain(`node.listen in ${c.file}`);
      }
    } finally {
      c.cleanup();
    }
  });

  describe("with something else on the port", () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      server = createServer((_req, res) => res.writeHead(404).end("404 page not found"));
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it("a missing admin token names the path and what to do", async () => {
      const c = writeConfig(`node:\n  listen: 127.0.0.1:${port}\n  data_dir: /nonexistent/pair-data\n`);
      try {
        const r = await runCli(["jobs", "--config", c.file]);
        expect(r.code).toBe(1);
        expect(r.stderr).toContain("no admin token at /nonexistent/pair-data/admin.token");
        expect(r.stderr).toContain("--config");
      } finally {
        c.cleanup();
      }
    });

    it("a server that is not PAIR is named as such", async () => {
      const c = writeConfig((dir) => `node:\n  listen: 127.0.0.1:${port}\n  data_dir: ${dir}\n`);
      try {
        writeFileSync(join(c.dir, "admin.token"), "abc\n");
        const r = await runCli(["status", "--config", c.file]);
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(
          /something answers on 127\.0\.0\.1:\d+, but it is not a PAIR node \(HTTP 404/,
        );
      } finally {
        c.cleanup();
      }
    });
  });
});
