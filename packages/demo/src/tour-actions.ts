/**
 * What the tour's steps share: the names they talk about, the curl line they print, how an answer
 * reads, B's view of the rented node, and `pair rented pause|resume` on A (resume waits, in virtual
 * time, until Hugging Face reports the endpoint running).
 * Must not know: any step's expectations.
 */

import type { DemoCluster } from "./cluster.js";
import { DEMO_HF_ENDPOINT, DEMO_HF_MODEL, DEMO_RENTED_NODE } from "./cluster-config.js";
import { adminCall, type ChatAnswer } from "./http.js";
import { hfState, nodeRow, waitFor } from "./tour-probes.js";
import type { TourPrinter } from "./tour.js";

export const NODE = DEMO_RENTED_NODE;
export const MODEL = DEMO_HF_MODEL;
export const ENDPOINT = `${DEMO_HF_ENDPOINT.namespace}/${DEMO_HF_ENDPOINT.name}`;
/** The seed's old header timeout that cut cold starts off. */
export const OLD_TIMEOUT_MS = 120_000;
/** The tour's own curl line for a model, on a node's port. */
export const curl = (url: string, stream = false) =>
  `curl${stream ? " -N" : ""} ${url}/v1/chat/completions -d '{"model": "${MODEL}"${stream ? ', "stream": true' : ""}, …}'`;

export function answer(a: ChatAnswer): string {
  return a.status < 400
    ? `HTTP ${a.status}, served by ${a.servedBy ?? "?"}${a.events > 0 ? `, streamed in ${a.events} events` : ""}`
    : `HTTP ${a.status} ${a.errorCode ?? "?"}: ${a.errorMessage ?? a.text.slice(0, 200)}`;
}

/** B's view of the rented node, once `ok` holds (or after 5 s). */
export function onB(c: DemoCluster, ok: (row: Record<string, unknown> | undefined) => boolean) {
  return waitFor(() => nodeRow(c.b.node), ok);
}

export async function lifecycle(
  c: DemoCluster,
  out: TourPrinter,
  action: "pause" | "resume",
): Promise<number> {
  out.does(`pair rented ${action} ${NODE}            # on A`);
  const done = await adminCall(c.a.node, "/pair/v1/rented/lifecycle", { name: NODE, action });
  return done.status;
}

/** Resume the endpoint and let virtual time run until Hugging Face reports it running. */
export async function resumeRunning(c: DemoCluster, out: TourPrinter): Promise<string> {
  await lifecycle(c, out, "resume");
  for (let i = 0; i < 30 && hfState(c) !== "running"; i += 1) await c.advance(10_000);
  out.sees(`hf endpoints describe ${ENDPOINT} → ${hfState(c)}`);
  return hfState(c);
}
