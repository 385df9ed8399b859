/**
 * One admin API call of `pair rented …`: find the node from the config, send, and turn a PAIR error
 * envelope into a CLI failure naming its code (`budget_exceeded: …`).
 * Must not know: what the routes return, how it is shown.
 */

import { loadConfig } from "../config/index.js";
import { adminRequest, adminTarget, type AdminPost } from "./admin-client.js";
import { CliFailure } from "./cli-errors.js";
import type { CliIo } from "./cli-io.js";

export async function rentedCall(
  io: CliIo,
  configFile: string | undefined,
  path: string,
  post?: AdminPost,
): Promise<unknown> {
  const loaded = await loadConfig({
    file: configFile,
    env: io.env,
    homeDir: io.homeDir,
    hostName: io.hostName,
  });
  const answer = await adminRequest(adminTarget(loaded), path, post);
  if (answer.status >= 200 && answer.status < 300) return answer.json;
  const error = (answer.json as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  const code = typeof error?.code === "string" ? error.code : `HTTP ${answer.status}`;
  const message = typeof error?.message === "string" ? error.message : JSON.stringify(answer.json);
  throw new CliFailure(`${code}: ${message}`);
}
