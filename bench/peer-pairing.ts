/**
 * Pairs two benchmark nodes the way a user does, through their admin APIs: `POST /pair/v1/pin` on the
 * node that shows the PIN, `POST /pair/v1/join` on the one that joins; then waits until the joiner's
 * merged view lists the peer as serving given models (its membership has fetched the peer's
 * inventory), so no measured request races the first inventory round.
 * Must not know: PAKE, certificates, how membership or forwarding work inside the node.
 */

import { setTimeout as sleep } from "node:timers/promises";
import type { NodeChildReady } from "./node-child.js";

const ADMIN_TIMEOUT_MS = 10_000;
const POLL_EVERY_MS = 100;

/** An admin call on `node`; the token goes in a header only, never into an error. */
async function admin(node: NodeChildReady, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${node.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${node.adminToken}`, "content-type": "application/json" },
    signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status !== 200)
    throw new Error(
      `${node.name} ${path}: HTTP ${res.status}: ${text.slice(0, 300)} (see the node's log above)`,
    );
  return JSON.parse(text) as unknown;
}

/** `joiner` joins `shower` with a PIN that `shower` shows (as `pair pin` / `pair join`). */
export async function pairNodes(joiner: NodeChildReady, shower: NodeChildReady): Promise<void> {
  const answer = await admin(shower, "/pair/v1/pin", {});
  const pin = (answer as { pin?: unknown }).pin;
  if (typeof pin !== "string") throw new Error(`${shower.name} /pair/v1/pin: no pin in the answer`);
  await admin(joiner, "/pair/v1/join", { address: shower.clusterAddress, pin });
}

/** Whether the merged model view (`GET /pair/v1/models` rows) lists `peerName` for every model. */
export function servesAll(rows: unknown, peerName: string, models: readonly string[]): boolean {
  if (!Array.isArray(rows)) return false;
  const nodesOf = (model: string): unknown => {
    const row: unknown = rows.find((r: unknown) => (r as { model?: unknown } | null)?.model === model);
    return (row as { nodes?: unknown } | undefined)?.nodes;
  };
  return models.every((model) => {
    const nodes = nodesOf(model);
    return Array.isArray(nodes) && nodes.includes(peerName);
  });
}

/** Waits until `node` sees `peerName` serving every one of `models`; throws after `withinMs`. */
export async function waitUntilSees(
  node: NodeChildReady,
  peerName: string,
  models: readonly string[],
  withinMs: number,
): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (servesAll(await admin(node, "/pair/v1/models"), peerName, models)) return performance.now() - started;
    if (performance.now() - started > withinMs)
      throw new Error(
        `${node.name} did not list ${peerName} as serving ${models.join(", ")} within ${withinMs} ms ` +
          "(is the membership refresh slower than that?)",
      );
    await sleep(POLL_EVERY_MS);
  }
}
