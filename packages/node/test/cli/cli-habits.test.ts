// Habits users bring from Ollama and other CLIs: aliases, "did you mean", options before a
// subcommand, --config and --json on every command, structured logs.
import { describe, expect, it } from "vitest";
import { splitSubcommand } from "../../src/cli/command-args.js";
import { eventLog, logFormatOf } from "../../src/cli/event-log.js";
import { COMMANDS } from "../../src/cli/main.js";
import { describeLines } from "../../src/cli/rented-describe.js";
import { runCli, writeConfig } from "./cli-harness.js";

describe("aliases and suggestions", () => {
  it("pair ls and pair list are pair models (help names them too)", async () => {
    const help = await runCli(["--help"]);
    expect(help.stdout).toMatch(/^ {2}models, ls, list +the merged inventory/m);
    for (const word of ["ls", "list"]) {
      expect((await runCli(["help", word])).stdout).toMatch(/^Usage: pair models/);
      // No node runs here: the alias asks the node exactly as `pair models` does.
      const [viaAlias, viaName] = [await runCli([word]), await runCli(["models"])];
      expect(viaAlias.code).toBe(1);
      expect(viaAlias.stderr.replace(`pair ${word}:`, "pair models:")).toBe(viaName.stderr);
    }
  });

  it.each([
    [["modles"], /unknown command "modles" — did you mean "models"\?/],
    [["help", "staus"], /no help for unknown command "staus" — did you mean "status"\?/],
    [["status", "--jsn"], /Unknown option '--jsn'\. Did you mean --json\?/],
    [["serve", "--confg", "x"], /Unknown option '--confg'\. Did you mean --config\?/],
    [["rented", "lsit"], /unknown subcommand "lsit" — did you mean "list"\?/],
    [["apikey", "--config", "f.yaml", "lst"], /unknown subcommand "lst" — did you mean "list"\?/],
    [["credential", "sett", "x"], /unknown subcommand "sett" — did you mean "set"\?/],
  ])("pair %j suggests the closest name (exit 2)", async (argv, message) => {
    const r = await runCli(argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it("a word far from every name gets no guess", async () => {
    const r = await runCli(["frobnicate"]);
    expect(r.stderr).toMatch(/unknown command "frobnicate" \(expected one of: serve, /);
    expect(r.stderr).not.toMatch(/did you mean/);
  });
});

describe("options before the subcommand", () => {
  it("splits the subcommand from options and their values", () => {
    expect(splitSubcommand(["--config", "list", "list", "--json"])).toEqual({
      sub: "list",
      rest: ["--config", "list", "--json"],
    });
    expect(splitSubcommand(["--json"])).toEqual({ sub: undefined, rest: ["--json"] });
    expect(splitSubcommand(["--", "list"])).toEqual({ sub: undefined, rest: ["--", "list"] });
  });

  it("pair apikey --config FILE list --json works as pair apikey list does", async () => {
    const c = writeConfig((dir) => `node:\n  name: habits\n  data_dir: ${dir}/data\n`);
    try {
      const before = await runCli(["apikey", "list", "--config", c.file, "--json"]);
      const after = await runCli(["apikey", "--config", c.file, "list", "--json"]);
      expect(before.code).toBe(0);
      expect(after).toEqual(before);
    } finally {
      c.cleanup();
    }
  });
});

describe("--config and --json on every command", () => {
  it.each(COMMANDS.map((c) => [c.name]))("pair %s documents --config and --json", (name) => {
    const usage = COMMANDS.find((c) => c.name === name)!.usage;
    expect(usage).toContain("--config");
    expect(usage).toContain("--json");
  });

  // Each reads --config (the file is missing, so the command fails on it, exit 1) and takes --json.
  const READ_CONFIG: readonly (readonly string[])[] = [
    ["serve"],
    ["status"],
    ["models"],
    ["ls"],
    ["ps"],
    ["nodes"],
    ["jobs"],
    ["history"],
    ["ui"],
    ["doctor"],
    ["pin"],
    ["join", "127.0.0.1:1", "--pin", "123456"],
    ["peers"],
    ["unpair", "x"],
    ["apikey", "create", "k"],
    ["apikey", "list"],
    ["apikey", "revoke", "k"],
    ["rented", "list"],
    ["rented", "describe", "x"],
    ["rented", "share", "x", "on"],
    ["rented", "policy", "x", "never"],
    ["rented", "reset", "x"],
    ["rented", "check"],
    ["rented", "pause", "x"],
    ["rented", "resume", "x"],
    ["rented", "delete", "x", "--yes"],
    ["rented", "attach", "x", "--provider", "openai-compatible", "--base-url", "https://a.example/v1"],
    ["rented", "create", "x", "--repo", "a/b", "--gpu", "T4", "--unlimited"],
    [
      "rented",
      "create",
      "x",
      "--provider",
      "huggingface-job",
      "--repo",
      "a/b",
      "--flavor",
      "l4x1",
      "--window",
      "1h",
      "--unlimited",
    ],
    ["rented", "catalog"],
    ["rented", "hardware"],
    ["batch", "plan", "f.jsonl", "--deadline", "8h"],
    ["batch", "submit", "f.jsonl"],
    ["batch", "list"],
    ["batch", "status", "b"],
    ["batch", "cancel", "b"],
    ["batch", "results", "b"],
    ["service", "install", "--files-only"],
  ];
  it.each(READ_CONFIG.map((argv) => [argv.join(" "), argv]))(
    "pair %s --config FILE --json reads FILE",
    async (_, argv) => {
      const r = await runCli([...argv, "--config", "/nonexistent/pair.yaml", "--json"]);
      expect(r.stderr).not.toMatch(/Unknown option/);
      expect(r.stderr).toMatch(/file_not_found: no config file at \/nonexistent\/pair\.yaml/);
      expect(r.code).toBe(1);
    },
  );

  it("pair credential set NAME --config FILE --json is accepted (the store, not the config, holds secrets)", async () => {
    const r = await runCli(["credential", "set", "hf", "--config", "/nonexistent/pair.yaml", "--json"]);
    expect(r.stderr).toMatch(/^pair credential: empty secret on stdin/);
    expect(r.code).toBe(1);
  });

  it.each([["uninstall"], ["status"]])(
    "pair service %s --files-only --config FILE --json answers JSON",
    async (sub) => {
      const r = await runCli([
        "service",
        sub,
        "--files-only",
        "--config",
        "/nonexistent/pair.yaml",
        "--json",
      ]);
      expect(r).toMatchObject({ code: 0, stderr: "" });
      expect(JSON.parse(r.stdout)).toMatchObject({ platform: process.platform });
    },
  );

  it("pair demo accepts --config and says it is not used", async () => {
    const r = await runCli(["demo", "--config", "x.yaml", "--port", "11434"]);
    // The port refusal comes after the options were read: --config itself was accepted.
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/11434 is PAIR's own port/);
    expect(r.stderr).not.toMatch(/Unknown option/);
  });
});

describe("structured logs", () => {
  const lines = (env: Record<string, string>, format: "text" | "json") => {
    const out: string[] = [];
    const log = eventLog({ stderr: (t) => void out.push(t), nowMs: () => Date.UTC(2030, 0, 2), env }, format);
    log("engine ollama: up");
    log("engine ollama: up"); // a repeat is dropped in either format
    log("stopped");
    return out;
  };

  it("json: one object a line with time and message", () => {
    expect(lines({}, "json")).toEqual([
      '{"time":"2030-01-02T00:00:00.000Z","msg":"engine ollama: up"}\n',
      '{"time":"2030-01-02T00:00:00.000Z","msg":"stopped"}\n',
    ]);
    expect(logFormatOf({ PAIR_LOG_FORMAT: "JSON" })).toBe("json");
    expect(logFormatOf({})).toBe("text");
  });

  it("text: stamped, except under journald, which stamps lines itself", () => {
    expect(lines({}, "text")[0]).toBe("2030-01-02T00:00:00.000Z engine ollama: up\n");
    expect(lines({ JOURNAL_STREAM: "8:1234" }, "text")).toEqual(["engine ollama: up\n", "stopped\n"]);
  });
});

describe("pair rented describe", () => {
  it("puts a managed node's GPU, state, price, spend, idle timer and recent history on one page", () => {
    const page = describeLines(
      {
        name: "gpu-hf",
        provider: "huggingface-endpoint",
        gpu: "L40S ×1",
        state: "paused",
        provider_state: "paused",
        models: ["llama"],
        shared: true,
        policy: "when-no-local-node",
        overridden: true,
        eligible: false,
        reason: "paused by the idle timer",
        warnings: [],
        budget: { usd_per_day: 5, usd_per_month: null },
        managed: {
          spend_usd: { session: 0.25, today: 0.5, month: 1.5 },
          usd_per_hour: 1.8,
          open_obligations: 0,
          last_active_at: "2030-01-02T00:00:00.000Z",
          idle_pause_min: 15,
          paused_by: "idle",
        },
      },
      Array.from({ length: 12 }, (_, i) => ({ at: `t${i}`, state: "running", reason: null })),
    ).join("\n");
    expect(page).toMatch(/^gpu-hf — Rented · off-LAN, huggingface-endpoint\n {2}gpu {10}L40S ×1\n/);
    expect(page).toContain("takes requests no — paused by the idle timer");
    expect(page).toContain("budget       $5.00/day, no cap/month");
    expect(page).toContain("spent        $0.25 this session, $0.50 today, $1.50 this month");
    expect(page).toContain("changed at run time");
    expect(page).toContain("(last 10 of 12; --json has all)");
    expect(page).not.toContain("t1 ");
    expect(page).toContain("t11");
  });
});
