/**
 * The one place the configuration reads the machine it runs on: the home directory, the host
 * name and the platform's default data dir, used only when a caller does not pass them in.
 * Must not know: anything else about the configuration.
 */

import { existsSync } from "node:fs";
import { homedir, hostname } from "node:os";
import type { ConfigHost } from "./config-types.js";
import { platformPaths } from "./platform-paths.js";

export function systemHost(): ConfigHost {
  const homeDir = homedir();
  const paths = platformPaths({ platform: process.platform, env: process.env, homeDir, exists: existsSync });
  return { homeDir, hostName: hostname(), dataDir: paths.dataDir };
}
