/**
 * Installing, removing and asking after the per-user service that runs `pair serve`: where each
 * platform keeps the file (service-files.ts renders it), and the commands that tell the OS
 * (`systemctl --user`, `launchctl`, `schtasks`), run through a seam so a test or `--files-only`
 * writes the file and runs nothing.
 * Must not know: what the node does, the command line's flags and output.
 */

import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, win32 } from "node:path";
import {
  launchdPlist,
  LAUNCHD_LABEL,
  systemdUnit,
  windowsTaskXml,
  WINDOWS_TASK_NAME,
  type ServicePlatform,
  type ServiceSpec,
} from "./service-files.js";

/** Runs a program with arguments; resolves with its exit code and output (never rejects on a non-zero exit). */
export type ProgramRunner = (
  program: string,
  args: readonly string[],
) => Promise<{ readonly code: number; readonly output: string }>;

export const execRunner: ProgramRunner = (program, args) =>
  new Promise((resolve) => {
    execFile(program, [...args], { timeout: 30_000 }, (error, stdout, stderr) => {
      const code =
        error === null ? 0 : typeof error.code === "number" ? error.code : error.code === "ENOENT" ? 127 : 1;
      resolve({ code, output: `${stdout}${stderr}`.trim() || (error?.message ?? "") });
    });
  });

export interface ServiceHost {
  readonly platform: ServicePlatform;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homeDir: string;
  /** The user's numeric id (launchctl's `gui/UID`) and name (the Windows task's user). */
  readonly uid: number;
  readonly userName: string;
}

/** Where the service's file lives for this user. */
export function serviceFile(host: ServiceHost): string {
  switch (host.platform) {
    case "darwin":
      return join(host.homeDir, "Library", "LaunchAgents", `${LAUNCHD_LABEL}.plist`);
    case "win32": {
      const local = host.env["LOCALAPPDATA"];
      const base =
        local !== undefined && win32.isAbsolute(local) ? local : win32.join(host.homeDir, "AppData", "Local");
      return win32.join(base, "pair", "pair-task.xml");
    }
    default: {
      const xdg = host.env["XDG_CONFIG_HOME"];
      const base = xdg !== undefined && xdg !== "" && isAbsolute(xdg) ? xdg : join(host.homeDir, ".config");
      return join(base, "systemd", "user", "pair.service");
    }
  }
}

/** The file's text for this platform. */
export function serviceText(host: ServiceHost, spec: ServiceSpec): string {
  switch (host.platform) {
    case "darwin":
      return launchdPlist(spec);
    case "win32":
      return windowsTaskXml(spec, host.userName);
    default:
      return systemdUnit(spec);
  }
}

/** A step the OS is told, as the user could type it. */
export interface ServiceStep {
  readonly program: string;
  readonly args: readonly string[];
}

export function installSteps(host: ServiceHost, file: string): ServiceStep[] {
  switch (host.platform) {
    case "darwin":
      return [{ program: "launchctl", args: ["bootstrap", `gui/${host.uid}`, file] }];
    case "win32":
      return [
        { program: "schtasks", args: ["/Create", "/TN", WINDOWS_TASK_NAME, "/XML", file, "/F"] },
        { program: "schtasks", args: ["/Run", "/TN", WINDOWS_TASK_NAME] },
      ];
    default:
      return [
        { program: "systemctl", args: ["--user", "daemon-reload"] },
        { program: "systemctl", args: ["--user", "enable", "--now", "pair.service"] },
      ];
  }
}

export function uninstallSteps(host: ServiceHost): ServiceStep[] {
  switch (host.platform) {
    case "darwin":
      return [{ program: "launchctl", args: ["bootout", `gui/${host.uid}/${LAUNCHD_LABEL}`] }];
    case "win32":
      // /End terminates the process: no pause on exit (docs/service.md says what backstops it).
      return [
        { program: "schtasks", args: ["/End", "/TN", WINDOWS_TASK_NAME] },
        { program: "schtasks", args: ["/Delete", "/TN", WINDOWS_TASK_NAME, "/F"] },
      ];
    default:
      return [
        { program: "systemctl", args: ["--user", "disable", "--now", "pair.service"] },
        { program: "systemctl", args: ["--user", "daemon-reload"] },
      ];
  }
}

export function statusStep(host: ServiceHost): ServiceStep {
  switch (host.platform) {
    case "darwin":
      return { program: "launchctl", args: ["print", `gui/${host.uid}/${LAUNCHD_LABEL}`] };
    case "win32":
      return { program: "schtasks", args: ["/Query", "/TN", WINDOWS_TASK_NAME, "/FO", "LIST"] };
    default:
      return { program: "systemctl", args: ["--user", "is-active", "pair.service"] };
  }
}

export interface StepResult extends ServiceStep {
  readonly code: number;
  readonly output: string;
}

/** Runs steps in order, stopping at the first that fails when `stopOnFailure`. */
export async function runSteps(
  steps: readonly ServiceStep[],
  run: ProgramRunner,
  stopOnFailure: boolean,
): Promise<StepResult[]> {
  const results: StepResult[] = [];
  for (const step of steps) {
    const r = await run(step.program, step.args);
    results.push({ ...step, ...r });
    if (r.code !== 0 && stopOnFailure) break;
  }
  return results;
}

/** Writes the service file (its folder made as needed); returns whether an older one was replaced. */
export function writeServiceFile(file: string, text: string, platform: ServicePlatform): boolean {
  const replaced = existsSync(file);
  mkdirSync(dirname(file), { recursive: true });
  // schtasks reads its XML as UTF-16 (with a byte-order mark), as Task Scheduler itself writes it.
  if (platform === "win32") writeFileSync(file, Buffer.from(`\ufeff${text}`, "utf16le"), { mode: 0o644 });
  else writeFileSync(file, text, { mode: 0o644 });
  return replaced;
}

/** The service file as it is on disk (UTF-16 for Windows), or undefined when there is none. */
export function readServiceFile(file: string, platform: ServicePlatform): string | undefined {
  if (!existsSync(file)) return undefined;
  const bytes = readFileSync(file);
  return platform === "win32" ? bytes.toString("utf16le").replace(/^\ufeff/, "") : bytes.toString("utf8");
}

export function removeServiceFile(file: string): boolean {
  const had = existsSync(file);
  rmSync(file, { force: true });
  return had;
}
