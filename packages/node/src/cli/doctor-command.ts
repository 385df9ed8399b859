/**
 * `pair doctor`: runs every check of doctor/doctor-checks.ts against this machine and the config,
 * prints each with the command that fixes it, and exits 0 only when all is well (no failure, no warning).
 * Must not know: what each check looks at (doctor-checks.ts).
 */

import { statSync, existsSync } from "node:fs";
import { loadConfig } from "../config/index.js";
import { CredentialError, OsCredentialStore } from "../credentials/index.js";
import {
  checkBudgets,
  checkClientPort,
  checkCredentials,
  checkDataDir,
  checkEngines,
  checkNode,
  checkPeers,
  type CheckResult,
  type DoctorProbes,
} from "../doctor/doctor-checks.js";
import { adminRequest, adminTarget } from "./admin-client.js";
import { EXIT_FAILURE, EXIT_OK } from "./cli-errors.js";
import type { Command } from "./command.js";
import { CONFIG_OPTION, HELP_OPTION, JSON_OPTION, parseCommandArgs } from "./command-args.js";
import { renderTable } from "./text-table.js";

const PROBE_TIMEOUT_MS = 2_000;

async function httpGet(url: string) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    return { status: res.status, body: (await res.text()).slice(0, 4_096) };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return new Error(cause ?? (error instanceof Error ? error.message : String(error)));
  }
}

export const doctorCommand: Command = {
  name: "doctor",
  summary: "check this machine and the config, and say how to fix what is wrong",
  usage: `Usage: pair doctor [--config FILE] [--json]

Checks, and for each problem prints the command that fixes it:
  node              this Node is a supported line (22, 24, 26)
  client port       who holds node.listen (default 127.0.0.1:11434): PAIR, Ollama (and how that
                    Ollama was installed: systemd unit, macOS app, Windows, a shell — with the
                    setting that moves it to 127.0.0.1:11435), something else, or nothing
  engine NAME       each engine of the config answers
  credential NAME   the OS credential store answers and holds every credential the config names
  data dir          node.data_dir is yours and mode 700
  budget NAME       every rented node PAIR starts (billed) has a cap (unlimited: a warning)
  peer NAME         the running node's paired peers are up (skipped when no node runs)
  clock NAME        each up peer's clock is within 2 s of this node's (a warning), 5 min (a failure)
Exit status 0 only when all is well (every check ok or skipped), 1 when one failed or warned.
--json prints [{"check", "status" (ok|warn|fail|skip), "detail", "fix"}].

Options:
  --config FILE  the config to check (else $PAIR_CONFIG, else the default file (README))
  --json         print JSON for scripts
  -h, --help     show this help`,
  async run(args, io) {
    const flags = parseCommandArgs(args, { ...CONFIG_OPTION, ...JSON_OPTION, ...HELP_OPTION });
    const loaded = await loadConfig({
      file: flags.config,
      env: io.env,
      homeDir: io.homeDir,
      hostName: io.hostName,
    });
    const store = new OsCredentialStore();
    const probes: DoctorProbes = {
      platform: process.platform,
      nodeVersion: process.version,
      httpGet,
      exists: existsSync,
      stat: (path) => {
        try {
          const s = statSync(path);
          return { mode: s.mode, uid: s.uid };
        } catch {
          return undefined;
        }
      },
      uid: process.getuid?.() ?? -1,
      credentialStored: async (ref) => {
        try {
          return (await store.get(ref)) !== undefined;
        } catch (error) {
          if (error instanceof CredentialError) return error;
          throw error;
        }
      },
      admin: async (path) => {
        try {
          const answer = await adminRequest(adminTarget(loaded), path);
          return answer.status === 200 ? answer.json : undefined;
        } catch {
          return undefined;
        }
      },
    };
    const { config } = loaded;
    const results: CheckResult[] = [
      checkNode(probes),
      await checkClientPort(config, probes),
      ...(await checkEngines(config, probes)),
      ...(await checkCredentials(config, probes)),
      ...checkDataDir(config, probes),
      ...checkBudgets(config),
      ...(await checkPeers(probes)),
    ];
    if (flags.json === true) io.stdout(`${JSON.stringify(results, null, 2)}\n`);
    else {
      io.stdout(`config: ${loaded.found ? loaded.file.path : "none (the defaults)"}\n`);
      const lines = renderTable(
        ["CHECK", "STATUS", "DETAIL"].map((header) => ({ header })),
        results.map((r) => [r.check, r.status.toUpperCase(), r.detail]),
      );
      io.stdout(`${lines.join("\n")}\n`);
      const fixes = results.filter((r) => r.fix !== null && r.status !== "ok");
      if (fixes.length > 0) io.stdout(`\nTo fix:\n${fixes.map((r) => `  ${r.check}: ${r.fix}\n`).join("")}`);
      io.stdout(`\n${verdict(results)}\n`);
    }
    return results.some((r) => r.status === "fail" || r.status === "warn") ? EXIT_FAILURE : EXIT_OK;
  },
};

/** The last line: all well, or how many checks failed and warned (either makes the exit status 1). */
function verdict(results: readonly CheckResult[]): string {
  const count = (status: CheckResult["status"]) => results.filter((r) => r.status === status).length;
  const failed = count("fail");
  const warned = count("warn");
  if (failed === 0 && warned === 0) return "All well.";
  const parts = [
    failed === 0 ? "" : `${failed} failed`,
    warned === 0 ? "" : `${warned} warning${warned === 1 ? "" : "s"}`,
  ].filter(Boolean);
  return `${parts.join(", ")}: fix ${failed + warned === 1 ? "it" : "them"} and run pair doctor again.`;
}
