/**
 * What the tour looks at between its actions, as a user would: the endpoint's state as Hugging Face
 * reports it (`hf endpoints describe`), the rented node as `pair nodes` shows it on a node, the Jobs
 * history of a node, whether a secret appears anywhere in a data dir or a log, and virtual durations
 * written the way people read them.
 * Must not know: the steps' order or expectations.
 */

import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { DemoCluster } from "./cluster.js";
import { DEMO_HF_ENDPOINT, DEMO_RENTED_NODE } from "./cluster-config.js";
import { adminCall, type AdminTarget } from "./http.js";

export const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** The endpoint's state on the emulated Hugging Face (`hf endpoints describe alice/qwen`). */
export function hfState(c: DemoCluster, name: string = DEMO_HF_ENDPOINT.name): string {
  return c.hf.endpoints.get(DEMO_HF_ENDPOINT.namespace, name)?.state ?? "gone";
}

export type NodeRow = Record<string, unknown>;

/** A row of `pair nodes --json` on `node`. */
export async function nodeRow(node: AdminTarget, name = DEMO_RENTED_NODE): Promise<NodeRow | undefined> {
  const rows = (await adminCall(node, "/pair/v1/nodes")).json;
  return Array.isArray(rows) ? (rows as NodeRow[]).find((r) => r["name"] === name) : undefined;
}

/** A row of `pair rented list --json` on the sponsor. */
export async function rentedRow(node: AdminTarget, name = DEMO_RENTED_NODE): Promise<NodeRow | undefined> {
  const rows = (await adminCall(node, "/pair/v1/rented")).json;
  return Array.isArray(rows) ? (rows as NodeRow[]).find((r) => r["name"] === name) : undefined;
}

/** Polls `check` every 50 ms for up to `ms`; the last value either way. */
export async function waitFor<T>(check: () => Promise<T>, ok: (value: T) => boolean, ms = 5_000): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const value = await check();
    if (ok(value) || performance.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The most recent history row of `node` for requests served by `servingNode`. */
export async function lastJob(node: AdminTarget, servingNode: string): Promise<NodeRow | undefined> {
  const rows = (await adminCall(node, "/pair/v1/history")).json;
  return Array.isArray(rows) ? (rows as NodeRow[]).find((r) => r["serving_node"] === servingNode) : undefined;
}

/** Files under `dir` (recursively) whose bytes contain `secret`, and log lines that do. */
export async function whereSecretIs(dir: string, log: readonly string[], secret: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const entry of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile() && (await readFile(path)).includes(secret)) found.push(path);
    }
  };
  await walk(dir);
  if (log.some((line) => line.includes(secret))) found.push("(its log)");
  return found;
}

/** Virtual time to the next UTC midnight plus a minute (a new budget day). */
export function untilNextDayMs(c: DemoCluster): number {
  const now = c.hf.nowMs();
  return Math.floor(now / DAY_MS) * DAY_MS + DAY_MS + MINUTE_MS - now;
}

/** `2 min 30 s`, `45 s`. */
export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min${s % 60 === 0 ? "" : ` ${s % 60} s`}`;
}
