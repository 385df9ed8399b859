/**
 * The one place the configuration reads the machine it runs on: the home directory and the host
 * name, used only when a caller does not pass them in.
 * Must not know: anything else about the configuration.
 */

import { homedir, hostname } from "node:os";
import type { ConfigHost } from "./config-types.js";

export function systemHost(): ConfigHost {
  return { homeDir: homedir(), hostName: hostname() };
}
