/**
 * `pair ui`: ask the running node (with the admin token) for a one-time login code and print the
 * dashboard's login URL — on the node's own listen address, good once and for two minutes. Opening
 * it in a browser sets the dashboard's session cookie. `--json` prints {url, expires_at}.
 * Must not know: how codes and sessions are kept, what the dashboard shows.
 */

import { loadConfig } from "../config/index.js";
import { adminRequest, adminTarget } from "./admin-client.js";
import { CliFailure, EXIT_OK } from "./cli-errors.js";
import type { Command } from "./command.js";
import { CONFIG_OPTION, HELP_OPTION, JSON_OPTION, parseCommandArgs } from "./command-args.js";

const OPTIONS = { ...CONFIG_OPTION, ...JSON_OPTION, ...HELP_OPTION } as const;

export const uiCommand: Command = {
  name: "ui",
  summary: "print the dashboard's URL with a one-time login code",
  usage: `Usage: pair ui [--config FILE] [--json]

Prints the dashboard's URL on the running node with a one-time login code. Open it in a browser on
a machine that reaches the node's client port: the code works once, within two minutes, and becomes
a session cookie (HttpOnly, SameSite=Strict) valid for 12 hours or until the node restarts.
--json prints {"url": "...", "expires_at": "<ISO time>"}.

Options:
  --config FILE  the node's config (else $PAIR_CONFIG, else the default file (README)): its
                 node.listen is where the node is asked, its data_dir holds the admin token
  --json         print JSON for scripts
  -h, --help     show this help`,
  async run(args, io) {
    const flags = parseCommandArgs(args, OPTIONS);
    const loaded = await loadConfig({
      file: flags.config,
      env: io.env,
      homeDir: io.homeDir,
      hostName: io.hostName,
    });
    const target = adminTarget(loaded);
    const answer = await adminRequest(target, "/pair/v1/ui/login-code", { body: {}, timeoutMs: 5_000 });
    const json = answer.json as { path?: unknown; expires_at?: unknown };
    if (answer.status !== 200 || typeof json.path !== "string" || typeof json.expires_at !== "string")
      throw new CliFailure(
        `the node on ${target.address} did not give a login code (HTTP ${answer.status}) — ` +
          "it may run an older PAIR without the dashboard; restart it with this version",
      );
    const url = `http://${target.address}${json.path}`;
    if (flags.json === true) io.stdout(`${JSON.stringify({ url, expires_at: json.expires_at }, null, 2)}\n`);
    else io.stdout(`Open the PAIR dashboard (this link works once, until ${json.expires_at}):\n\n  ${url}\n`);
    return EXIT_OK;
  },
};
