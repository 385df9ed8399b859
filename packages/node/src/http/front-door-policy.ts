/**
 * The front door's policy from what the node starts with: the config's `node.allowed_hosts` and
 * `node.allowed_origins`, `PAIR_ORIGINS` from the environment, the machine's name, and whether the
 * client port listens on loopback only. An entry of `PAIR_ORIGINS` that is no origin is logged by
 * position (never echoed) and left out.
 * Must not know: requests (front-door.ts decides them).
 */

import {
  DEFAULT_ALLOWED_ORIGINS,
  ORIGINS_ENV_VAR,
  parseOriginsEnv,
  type NodeSettings,
} from "../config/index.js";
import type { FrontDoorPolicy } from "./front-door.js";

export interface FrontDoorInputs {
  readonly node: Pick<NodeSettings, "allowedHosts" | "allowedOrigins">;
  readonly listenIsLoopback: boolean;
  /** `os.hostname()`. */
  readonly hostName: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly log: (line: string) => void;
}

export function frontDoorPolicy(inputs: FrontDoorInputs): FrontDoorPolicy {
  const fromEnv = parseOriginsEnv(inputs.env[ORIGINS_ENV_VAR]);
  if (fromEnv.badEntries.length > 0)
    inputs.log(
      `${ORIGINS_ENV_VAR}: entr${fromEnv.badEntries.length === 1 ? "y" : "ies"} ${fromEnv.badEntries.join(", ")} ` +
        'ignored: not an origin "scheme://host[:port]" (or "*")',
    );
  const name = inputs.hostName.trim().toLowerCase();
  return {
    checkHostOf: inputs.listenIsLoopback ? "every-caller" : "loopback-callers",
    // mDNS answers for `<hostname>.local`, so a browser may well use that name.
    machineNames: name === "" ? [] : [name, name.endsWith(".local") ? name.slice(0, -6) : `${name}.local`],
    allowedHosts: inputs.node.allowedHosts,
    allowedOrigins: [...DEFAULT_ALLOWED_ORIGINS, ...inputs.node.allowedOrigins, ...fromEnv.patterns],
  };
}
