// `pair service`: the files each platform gets (content; the systemd unit checked by systemd-analyze
// verify), the commands each runs, and install / status / uninstall writing the real file.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  launchdPlist,
  systemdUnit,
  windowsTaskXml,
  type ServiceSpec,
} from "../../src/service/service-files.js";
import {
  installSteps,
  readServiceFile,
  runSteps,
  serviceFile,
  uninstallSteps,
  writeServiceFile,
  type ServiceHost,
} from "../../src/service/service-install.js";
import { ServeChild } from "../support/serve-child.js";
import { runCli } from "./cli-harness.js";

const spec: ServiceSpec = {
  nodePath: process.execPath,
  nodeFlags: ["--expose-gc", "--heap-growing-percent=100"],
  script: "/opt/pair app/bin/pair.js",
  configFile: "/home/ada/.config/pair/pair 100%.yaml",
  env: { MALLOC_ARENA_MAX: "1" },
  stopTimeoutS: 85,
  logFile: "/Users/ada/Library/Logs/pair/pair.log",
};

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pair-service-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("systemd user unit (Linux)", () => {
  it("runs pair serve with the config, restarts on failure, stops with SIGTERM within the pause-on-exit bound", () => {
    const unit = systemdUnit(spec);
    expect(unit).toContain(
      `ExecStart=${process.execPath} --expose-gc --heap-growing-percent=100 "/opt/pair app/bin/pair.js" serve ` +
        '--config "/home/ada/.config/pair/pair 100%%.yaml"\n',
    );
    expect(unit).toContain("Environment=MALLOC_ARENA_MAX=1\n");
    expect(unit).toContain("KillSignal=SIGTERM\n");
    expect(unit).toContain("TimeoutStopSec=85\n");
    expect(unit).toContain("Restart=on-failure\n");
    expect(unit).toContain("WantedBy=default.target\n");
  });

  it("passes systemd-analyze verify", () => {
    const file = join(dir, "pair.service");
    writeFileSync(file, systemdUnit({ ...spec, script: join(dir, "pair app.js"), configFile: "" }));
    // verify checks every key and that ExecStart's program is executable; it prints problems on stderr.
    const out = execFileSync("systemd-analyze", ["verify", file], { encoding: "utf8", stdio: "pipe" });
    expect(out).toBe("");
    // It does fail on a broken unit, so the pass above means something.
    writeFileSync(file, systemdUnit({ ...spec, nodePath: join(dir, "no-node") }));
    expect(() => execFileSync("systemd-analyze", ["verify", file], { stdio: "pipe" })).toThrow(
      /not executable/,
    );
  });
});

describe("launchd agent (macOS)", () => {
  it("has the program arguments, restarts only after a failure, waits for the pause on exit, logs to a file", () => {
    const plist = launchdPlist({ ...spec, configFile: "/Users/ada/a&b <c>.yaml" });
    expect(plist).toContain("<key>Label</key>\n  <string>pair.node</string>");
    expect(plist).toContain("    <string>serve</string>\n    <string>--config</string>\n");
    expect(plist).toContain("<string>/Users/ada/a&amp;b &lt;c&gt;.yaml</string>");
    expect(plist).toMatch(/<key>KeepAlive<\/key>\n {2}<dict>\n {4}<key>SuccessfulExit<\/key>\n {4}<false\/>/);
    expect(plist).toContain("<key>ExitTimeOut</key>\n  <integer>85</integer>");
    expect(plist).toContain(
      "<key>StandardErrorPath</key>\n  <string>/Users/ada/Library/Logs/pair/pair.log</string>",
    );
    expect(plist).toContain("<key>MALLOC_ARENA_MAX</key>\n    <string>1</string>");
  });
});

describe("logon task (Windows)", () => {
  const win: ServiceSpec = {
    ...spec,
    nodePath: "C:\\Program Files\\nodejs\\node.exe",
    script: "C:\\Users\\ada\\AppData\\Roaming\\npm\\node_modules\\pair\\bin\\pair.js",
    configFile: "C:\\Users\\ada\\AppData\\Roaming\\pair\\my pair.yaml",
  };

  it("starts at logon, restarts after a failure, never times out; arguments quoted for Windows", () => {
    const task = windowsTaskXml(win, "ADA-PC\\ada");
    expect(task).toContain(
      "<LogonTrigger>\n      <Enabled>true</Enabled>\n      <UserId>ADA-PC\\ada</UserId>",
    );
    expect(task).toContain("<ExecutionTimeLimit>PT0S</ExecutionTimeLimit>");
    expect(task).toContain("<RestartOnFailure>");
    expect(task).toContain("<Command>&quot;C:\\Program Files\\nodejs\\node.exe&quot;</Command>");
    expect(task).toContain(
      "serve --config &quot;C:\\Users\\ada\\AppData\\Roaming\\pair\\my pair.yaml&quot;</Arguments>",
    );
  });

  it("is written UTF-16 with a byte-order mark and read back", () => {
    const file = join(dir, "pair", "pair-task.xml");
    writeServiceFile(file, windowsTaskXml(win, "ada"), "win32");
    const bytes = readFileSync(file);
    expect([...bytes.subarray(0, 2)]).toEqual([0xff, 0xfe]);
    expect(readServiceFile(file, "win32")).toBe(windowsTaskXml(win, "ada"));
  });
});

describe("where the file goes and what is run", () => {
  const host = (platform: ServiceHost["platform"], env = {}): ServiceHost => ({
    platform,
    env,
    homeDir: platform === "win32" ? "C:\\Users\\ada" : "/home/ada",
    uid: 501,
    userName: "ada",
  });

  it("per platform", () => {
    expect(serviceFile(host("linux"))).toBe("/home/ada/.config/systemd/user/pair.service");
    expect(serviceFile(host("linux", { XDG_CONFIG_HOME: "/cfg" }))).toBe("/cfg/systemd/user/pair.service");
    expect(serviceFile(host("darwin"))).toBe("/home/ada/Library/LaunchAgents/pair.node.plist");
    expect(serviceFile(host("win32"))).toBe("C:\\Users\\ada\\AppData\\Local\\pair\\pair-task.xml");
    expect(installSteps(host("linux"), "f").map((s) => s.args.join(" "))).toEqual([
      "--user daemon-reload",
      "--user enable --now pair.service",
    ]);
    expect(installSteps(host("darwin"), "/f.plist")).toEqual([
      { program: "launchctl", args: ["bootstrap", "gui/501", "/f.plist"] },
    ]);
    expect(uninstallSteps(host("win32")).map((s) => s.args[0])).toEqual(["/End", "/Delete"]);
  });

  it("install stops at the first failing step; uninstall runs every step", async () => {
    const ran: string[] = [];
    const failing = (program: string, args: readonly string[]) => {
      ran.push(`${program} ${args.join(" ")}`);
      return Promise.resolve({ code: 1, output: "Failed to connect to bus" });
    };
    const results = await runSteps(installSteps(host("linux"), "f"), failing, true);
    expect(results).toHaveLength(1);
    expect(ran).toEqual(["systemctl --user daemon-reload"]);
    expect(await runSteps(uninstallSteps(host("linux")), failing, false)).toHaveLength(2);
  });
});

describe("pair service install | status | uninstall (the real file, --files-only)", () => {
  it("writes the unit for the config, reports it, removes it", async () => {
    const config = join(dir, "pair.yaml");
    writeFileSync(
      config,
      "node:\n  name: svc\n  data_dir: " +
        join(dir, "data") +
        "\nrented_nodes:\n  - name: r\n    provider: openai-compatible\n    base_url: https://127.0.0.1:9/v1\n" +
        "    lifecycle: { exit_timeout_s: 120 }\n",
    );
    const env = { XDG_CONFIG_HOME: join(dir, "xdg") };
    const unitPath = join(dir, "xdg", "systemd", "user", "pair.service");

    const installed = await runCli(["service", "install", "--config", config, "--files-only", "--json"], {
      env,
    });
    expect(installed.code, installed.stderr).toBe(0);
    const json = JSON.parse(installed.stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ platform: "linux", file: unitPath, replaced: false, config_file: config });
    // The longest pause on exit (120 s) plus serve's grace and a margin.
    expect(json["stop_timeout_s"]).toBe(145);
    expect(json["to_run"]).toEqual([
      "systemctl --user daemon-reload",
      "systemctl --user enable --now pair.service",
    ]);
    const unit = readFileSync(unitPath, "utf8");
    expect(unit).toContain(`serve --config ${config}\n`);
    expect(unit).toContain("TimeoutStopSec=145\n");

    const again = await runCli(["service", "install", "--config", config, "--files-only"], { env });
    expect(again.stdout).toMatch(/^Replaced /);
    expect(again.stdout).toContain("Now run:\n  systemctl --user daemon-reload\n");

    const status = await runCli(["service", "status", "--files-only", "--json"], { env });
    expect(JSON.parse(status.stdout)).toEqual({
      platform: "linux",
      file: unitPath,
      installed: true,
      active: null,
      detail: null,
    });

    const removed = await runCli(["service", "uninstall", "--files-only", "--json"], { env });
    expect(JSON.parse(removed.stdout)).toMatchObject({ file: unitPath, removed: true });
    expect(existsSync(unitPath)).toBe(false);
    const none = await runCli(["service", "status"], { env });
    expect(none.stdout).toMatch(/^not installed/);
  });

  it("refuses a config that would not start, and writes nothing", async () => {
    const config = join(dir, "bad.yaml");
    writeFileSync(config, "node:\n  colour: blue\n");
    const env = { XDG_CONFIG_HOME: join(dir, "xdg") };
    const r = await runCli(["service", "install", "--config", config, "--files-only"], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("node.colour: unknown_key");
    expect(existsSync(join(dir, "xdg", "systemd", "user", "pair.service"))).toBe(false);
  });
});

describe("every stop a service manager or a terminal sends is graceful", () => {
  it.each(["SIGTERM", "SIGHUP"] as const)(
    "%s: the node stops as Ctrl-C stops it, and exits 0",
    async (signal) => {
      // An engine nobody answers at: the node serves anyway, which is all this needs.
      const node = await ServeChild.create({ name: "svc-stop", dir, engineUrl: "http://127.0.0.1:9" });
      await node.start();
      const exited = new Promise<number | null>((resolve) =>
        node.process!.once("exit", (code) => resolve(code)),
      );
      node.process!.kill(signal);
      expect(await exited, node.output).toBe(0);
      expect(node.output).toMatch(new RegExp(`${signal}: stopping — no new requests`));
      expect(node.output).toMatch(/ stopped\n/);
    },
    30_000,
  );
});
