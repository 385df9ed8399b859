/**
 * `pair service install | uninstall | status`: run `pair serve` as a per-user service (a systemd
 * user unit, a launchd agent, a Windows logon task) with the user's config, restarted on failure and
 * stopped gracefully, so rented nodes are paused when it stops. `--files-only` writes or removes the
 * file and prints the commands instead of running them.
 * Must not know: the file formats (service/service-files.ts), how the node runs.
 */

import { realpathSync } from "node:fs";
import { userInfo } from "node:os";
import { loadConfig } from "../config/index.js";
import { PAIR_NODE_ENV, PAIR_NODE_FLAGS } from "../process-flags.js";
import type { ServicePlatform, ServiceSpec } from "../service/service-files.js";
import {
  execRunner,
  installSteps,
  readServiceFile,
  removeServiceFile,
  runSteps,
  serviceFile,
  serviceText,
  statusStep,
  uninstallSteps,
  writeServiceFile,
  type ServiceHost,
  type ServiceStep,
  type StepResult,
} from "../service/service-install.js";
import { CliFailure, EXIT_OK } from "./cli-errors.js";
import type { CliIo } from "./cli-io.js";
import type { Command } from "./command.js";
import { CONFIG_OPTION, HELP_OPTION, JSON_OPTION, parseCommandWords, runSubcommand } from "./command-args.js";
import { SERVE_GRACE_MS } from "./serve-command.js";

const OPTIONS = {
  ...CONFIG_OPTION,
  ...JSON_OPTION,
  ...HELP_OPTION,
  "files-only": { type: "boolean" },
} as const;
/** Added to the longest pause on exit, for the node's own shutdown and the OS's scheduling. */
const STOP_MARGIN_S = 15;

const USAGE = `Usage: pair service install [--config FILE] [--files-only] [--json]
       pair service uninstall [--files-only] [--config FILE] [--json]
       pair service status [--config FILE] [--json]

Runs pair serve as a service of your user, started at login and restarted when it fails:
  Linux    a systemd user unit, $XDG_CONFIG_HOME/systemd/user/pair.service (systemctl --user)
  macOS    a launchd agent, ~/Library/LaunchAgents/pair.node.plist (launchctl)
  Windows  a Task Scheduler logon task "PAIR", from %LOCALAPPDATA%\\pair\\pair-task.xml (schtasks)
The service stops the node as Ctrl-C does, so rented nodes are paused on exit; the OS waits for the
longest pause on exit in the config before it kills the node. See docs/service.md for how each
platform stops it and how the service reaches the OS credential store.

  install    check the config, write the service file (replacing an older one) and start it
  uninstall  stop the service and remove its file
  status     whether the file is there and the service runs

Options:
  --config FILE  the config the service runs with (else $PAIR_CONFIG, else the default file
                 (README); with none, the service runs on the defaults)
  --files-only   write or remove the file only, and print the commands to run yourself
  --json         print JSON for scripts
  -h, --help     show this help`;

function hostOf(io: CliIo): ServiceHost {
  const platform = process.platform;
  if (platform !== "linux" && platform !== "darwin" && platform !== "win32")
    throw new CliFailure(`pair service supports Linux, macOS and Windows, not ${platform}`);
  return {
    platform: platform satisfies ServicePlatform,
    env: io.env,
    homeDir: io.homeDir,
    uid: process.getuid?.() ?? 0,
    userName: userInfo().username,
  };
}

const commandLine = (s: ServiceStep) => [s.program, ...s.args].join(" ");

function printJson(io: CliIo, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

function stepsJson(results: readonly StepResult[]) {
  return results.map((r) => ({ command: commandLine(r), code: r.code, output: r.output }));
}

/** A failed step as the failure of the command, with what to try. */
function failedStep(results: readonly StepResult[], what: string): CliFailure | undefined {
  const failed = results.find((r) => r.code !== 0);
  if (failed === undefined) return undefined;
  return new CliFailure(
    `${what}: \`${commandLine(failed)}\` failed (exit ${failed.code})${failed.output === "" ? "" : `: ${failed.output}`}` +
      (failed.code === 127 ? ` — ${failed.program} is not on this machine; use --files-only` : ""),
  );
}

async function specOf(io: CliIo, configFile: string | undefined): Promise<ServiceSpec & { found: boolean }> {
  // The config is checked now: a service that cannot start would only restart and fail in a loop.
  const loaded = await loadConfig({
    file: configFile,
    env: io.env,
    homeDir: io.homeDir,
    hostName: io.hostName,
  });
  const longestExitS = Math.max(0, ...loaded.config.rentedNodes.map((n) => n.lifecycle.exitTimeoutMs / 1000));
  const script = process.argv[1];
  if (script === undefined) throw new CliFailure("cannot tell which pair script runs this command");
  return {
    nodePath: process.execPath,
    nodeFlags: PAIR_NODE_FLAGS,
    script: realpathSync(script),
    // With no file, the service runs on the defaults, as `pair serve` does.
    configFile: loaded.found ? loaded.file.path : "",
    env: PAIR_NODE_ENV,
    stopTimeoutS: Math.ceil(SERVE_GRACE_MS / 1000 + longestExitS + STOP_MARGIN_S),
    found: loaded.found,
    ...(process.platform === "darwin" ? { logFile: `${io.homeDir}/Library/Logs/pair/pair.log` } : {}),
  };
}

async function install(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandWords(args, OPTIONS, []);
  const host = hostOf(io);
  const spec = await specOf(io, values.config);
  const file = serviceFile(host);
  const replaced = writeServiceFile(file, serviceText(host, spec), host.platform);
  const steps = installSteps(host, file);
  const filesOnly = values["files-only"] === true;
  const results = filesOnly ? [] : await runSteps(steps, execRunner, true);
  const failure = failedStep(results, `wrote ${file}, but starting the service failed`);
  if (values.json === true)
    printJson(io, {
      platform: host.platform,
      file,
      replaced,
      config_file: spec.found ? spec.configFile : null,
      stop_timeout_s: spec.stopTimeoutS,
      ran: stepsJson(results),
      to_run: filesOnly ? steps.map(commandLine) : [],
    });
  else {
    io.stdout(`${replaced ? "Replaced" : "Wrote"} ${file}\n`);
    io.stdout(
      `  runs: pair serve ${spec.found ? `--config ${spec.configFile}` : "(no config file: the defaults)"}\n`,
    );
    io.stdout(`  stop: graceful, up to ${spec.stopTimeoutS} s (rented nodes are paused on exit)\n`);
    if (filesOnly) io.stdout(`Now run:\n${steps.map((s) => `  ${commandLine(s)}\n`).join("")}`);
    else if (failure === undefined) io.stdout("Started. pair service status tells whether it runs.\n");
    if (host.platform === "linux")
      io.stdout(
        "It runs while you are logged in. To keep it running after logout: loginctl enable-linger " +
          `${userInfo().username} (rented nodes' credentials then wait for your keyring to be unlocked).\n`,
      );
  }
  if (failure !== undefined) throw failure;
  return EXIT_OK;
}

async function uninstall(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandWords(args, OPTIONS, []);
  const host = hostOf(io);
  const file = serviceFile(host);
  const steps = uninstallSteps(host);
  const filesOnly = values["files-only"] === true;
  // A service already stopped or unknown to the OS is not a failure here: removing it is the goal.
  const results = filesOnly ? [] : await runSteps(steps, execRunner, false);
  const removed = removeServiceFile(file);
  if (values.json === true)
    printJson(io, {
      platform: host.platform,
      file,
      removed,
      ran: stepsJson(results),
      to_run: filesOnly ? steps.map(commandLine) : [],
    });
  else {
    io.stdout(removed ? `Removed ${file}\n` : `No service file at ${file}\n`);
    if (filesOnly) io.stdout(`Run, to stop it:\n${steps.map((s) => `  ${commandLine(s)}\n`).join("")}`);
  }
  return EXIT_OK;
}

async function status(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandWords(args, OPTIONS, []);
  const host = hostOf(io);
  const file = serviceFile(host);
  const text = readServiceFile(file, host.platform);
  const step = statusStep(host);
  const asked =
    text === undefined || values["files-only"] === true
      ? undefined
      : await execRunner(step.program, step.args);
  const active = asked === undefined ? null : asked.code === 0;
  if (values.json === true)
    printJson(io, {
      platform: host.platform,
      file,
      installed: text !== undefined,
      active,
      detail: asked?.output ?? null,
    });
  else if (text === undefined) io.stdout(`not installed (no ${file}); pair service install adds it\n`);
  else
    io.stdout(
      `installed: ${file}\n` +
        (active === null
          ? ""
          : `running: ${active ? "yes" : "no"} (${commandLine(step)}: ${asked?.output ?? ""})\n`),
    );
  return EXIT_OK;
}

export const serviceCommand: Command = {
  name: "service",
  summary: "run pair serve as a service of your user: install, uninstall, status",
  usage: USAGE,
  async run(args, io) {
    return runSubcommand(args, io, { install, uninstall, status });
  },
};
