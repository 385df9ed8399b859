/**
 * The files that make `pair serve` a per-user service: a systemd user unit (Linux), a launchd agent
 * (macOS), a Task Scheduler logon task (Windows). Each starts the node at login with the user's
 * config, restarts it when it fails, and stops it with the signal that runs the graceful stop
 * (rented nodes paused on exit), waiting long enough for that stop to finish.
 * Pure: text in, text out. Must not know: where the files go, how the OS is told (service-install.ts).
 */

export type ServicePlatform = "linux" | "darwin" | "win32";

export interface ServiceSpec {
  /** The node binary that runs `pair` (absolute). */
  readonly nodePath: string;
  /** Flags before the script (PAIR_NODE_FLAGS). */
  readonly nodeFlags: readonly string[];
  /** The `pair` entry script (absolute). */
  readonly script: string;
  /** The config file the service runs with (absolute); "" for none (the defaults). */
  readonly configFile: string;
  /** Environment the node starts with (PAIR_NODE_ENV). Never a secret. */
  readonly env: Readonly<Record<string, string>>;
  /** How long the stop may take before the OS kills the node: the longest pause on exit plus the grace. */
  readonly stopTimeoutS: number;
  /** macOS: where the agent's output goes (launchd keeps no journal). */
  readonly logFile?: string;
}

/** The argument vector of the service's process. */
export function serviceArgv(spec: ServiceSpec): string[] {
  const config = spec.configFile === "" ? [] : ["--config", spec.configFile];
  return [spec.nodePath, ...spec.nodeFlags, spec.script, "serve", ...config];
}

/** One word of a systemd command line: quoted when it holds a space, a quote, a backslash or `%`/`$`. */
function systemdWord(word: string): string {
  const escaped = word.replace(/%/g, "%%").replace(/\$/g, "$$$$");
  return /[\s"'\\]/.test(escaped) ? `"${escaped.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"` : escaped;
}

export function systemdUnit(spec: ServiceSpec): string {
  const env = Object.entries(spec.env).map(([k, v]) => `Environment=${systemdWord(`${k}=${v}`)}\n`);
  return (
    "[Unit]\n" +
    "Description=PAIR node: one OpenAI- and Ollama-compatible endpoint over the cluster\n" +
    "After=network-online.target\n" +
    "Wants=network-online.target\n" +
    "\n" +
    "[Service]\n" +
    "Type=simple\n" +
    `ExecStart=${serviceArgv(spec).map(systemdWord).join(" ")}\n` +
    env.join("") +
    // SIGTERM runs the graceful stop; only the main process gets it, so nothing else is signalled first.
    "KillSignal=SIGTERM\n" +
    "KillMode=mixed\n" +
    `TimeoutStopSec=${spec.stopTimeoutS}\n` +
    "Restart=on-failure\n" +
    "RestartSec=5\n" +
    "\n" +
    "[Install]\n" +
    "WantedBy=default.target\n"
  );
}

export const LAUNCHD_LABEL = "pair.node";

const xml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

export function launchdPlist(spec: ServiceSpec): string {
  const strings = (items: readonly string[]) => items.map((s) => `    <string>${xml(s)}</string>\n`).join("");
  const env = Object.entries(spec.env)
    .map(([k, v]) => `    <key>${xml(k)}</key>\n    <string>${xml(v)}</string>\n`)
    .join("");
  const log = spec.logFile === undefined ? "" : xml(spec.logFile);
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n' +
    '<plist version="1.0">\n<dict>\n' +
    `  <key>Label</key>\n  <string>${LAUNCHD_LABEL}</string>\n` +
    `  <key>ProgramArguments</key>\n  <array>\n${strings(serviceArgv(spec))}  </array>\n` +
    (env === "" ? "" : `  <key>EnvironmentVariables</key>\n  <dict>\n${env}  </dict>\n`) +
    "  <key>RunAtLoad</key>\n  <true/>\n" +
    // Restart after a failure, not after a clean stop (launchctl bootout, logout).
    "  <key>KeepAlive</key>\n  <dict>\n    <key>SuccessfulExit</key>\n    <false/>\n  </dict>\n" +
    "  <key>ThrottleInterval</key>\n  <integer>5</integer>\n" +
    // launchd sends SIGTERM, then SIGKILL after ExitTimeOut (default 20 s: too short for a pause on exit).
    `  <key>ExitTimeOut</key>\n  <integer>${spec.stopTimeoutS}</integer>\n` +
    (log === ""
      ? ""
      : `  <key>StandardOutPath</key>\n  <string>${log}</string>\n` +
        `  <key>StandardErrorPath</key>\n  <string>${log}</string>\n`) +
    "</dict>\n</plist>\n"
  );
}

export const WINDOWS_TASK_NAME = "PAIR";

/** A Windows command-line argument, quoted by the rules CommandLineToArgvW reads. */
function windowsArg(arg: string): string {
  if (arg !== "" && !/[\s"]/.test(arg)) return arg;
  return `"${arg.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\+)$/, "$1$1")}"`;
}

/**
 * A Task Scheduler task (schema 1.2) that starts at the user's logon, restarts after a failure, and
 * has no run-time limit. Written UTF-16 by the installer, as schtasks expects.
 */
export function windowsTaskXml(spec: ServiceSpec, userId: string): string {
  const [command = "", ...args] = serviceArgv(spec);
  return (
    '<?xml version="1.0" encoding="UTF-16"?>\n' +
    '<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">\n' +
    "  <RegistrationInfo>\n    <Description>PAIR node: one OpenAI- and Ollama-compatible endpoint over the cluster</Description>\n  </RegistrationInfo>\n" +
    `  <Triggers>\n    <LogonTrigger>\n      <Enabled>true</Enabled>\n      <UserId>${xml(userId)}</UserId>\n    </LogonTrigger>\n  </Triggers>\n` +
    `  <Principals>\n    <Principal id="Author">\n      <UserId>${xml(userId)}</UserId>\n      <LogonType>InteractiveToken</LogonType>\n      <RunLevel>LeastPrivilege</RunLevel>\n    </Principal>\n  </Principals>\n` +
    "  <Settings>\n" +
    "    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>\n" +
    "    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>\n" +
    "    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>\n" +
    "    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>\n" +
    "    <RestartOnFailure>\n      <Interval>PT1M</Interval>\n      <Count>999</Count>\n    </RestartOnFailure>\n" +
    "    <Hidden>true</Hidden>\n" +
    "  </Settings>\n" +
    `  <Actions Context="Author">\n    <Exec>\n      <Command>${xml(windowsArg(command))}</Command>\n` +
    `      <Arguments>${xml(args.map(windowsArg).join(" "))}</Arguments>\n    </Exec>\n  </Actions>\n` +
    "</Task>\n"
  );
}
