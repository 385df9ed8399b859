/**
 * Shared pieces of the provider-fault suite (`provider-faults-*.test.ts`): a local engine beside the
 * rented node (so "other models keep being served" can be asked), client requests through the sponsor,
 * its admin view of a rented node, the hosting state read back from the sponsor's SQLite, and the
 * invariants every fault must leave true (each resource the provider bills has exactly one open
 * obligation; at most one open obligation per resource; a discharged obligation carries evidence).
 * Must not know: which provider or fault a test drives (callers hand in what the emulator bills).
 */

import { join } from "node:path";
import { startEngineEmulator, type EngineEmulator } from "@pair/emulators";
import type { HostingState, StopObligation, ResourceKey } from "@pair/provision";
import { SqliteHostingStore } from "@pair/store";
import { request } from "undici";
import { expect } from "vitest";
import type { RunningNode } from "../../src/node.js";
import { chatReply } from "../support/chat.js";

export const LOCAL_MODEL = "local:0.5b";

/** An Ollama engine emulator serving `local-model`, and the `engines:` YAML items naming it. */
export async function localEngine(): Promise<{ engine: EngineEmulator; lines: string[] }> {
  const engine = await startEngineEmulator({
    api: "ollama",
    name: "local",
    models: [{ name: LOCAL_MODEL, maxTokens: 4 }],
  });
  return {
    engine,
    lines: ["  - name: local", "    api: ollama", `    base_url: ${engine.url}`, "    probe_interval_s: 0.2"],
  };
}

export interface ChatAnswer {
  readonly status: number;
  readonly text: string;
  /** Real ms from sending to the end of the answer. */
  readonly elapsedMs: number;
}

/** A non-streamed chat request through the sponsor's OpenAI route. */
export async function chat(node: RunningNode, model: string): Promise<ChatAnswer> {
  const started = performance.now();
  const { status, text } = await chatReply(node.url, { model, maxTokens: 3 });
  return { status, text, elapsedMs: performance.now() - started };
}

/** The node's row of `pair rented list` (`GET /pair/v1/rented`). */
export async function rentedRow(node: RunningNode, name: string): Promise<Record<string, unknown>> {
  const res = await request(`${node.url}/pair/v1/rented`, {
    headers: { authorization: `Bearer ${node.adminToken}` },
  });
  const rows = (await res.body.json()) as Record<string, unknown>[];
  return rows.find((r) => r["name"] === name) ?? {};
}

/** The hosting state the sponsor committed to `<data_dir>/managed/<node>.db` (read independently). */
export function storedHosting(dataDir: string, node: string): HostingState {
  const store = new SqliteHostingStore({ path: join(dataDir, "managed", `${node}.db`) });
  try {
    return store.load();
  } finally {
    store.close();
  }
}

function keyOf(state: HostingState, o: StopObligation): ResourceKey | undefined {
  return o.key ?? state.deployments[o.deploymentId]?.key;
}

/** Open obligations (from SQLite) whose resource is `incarnation` of `name`. */
export function openFor(state: HostingState, name: string, incarnation: string): StopObligation[] {
  return Object.values(state.obligations).filter(
    (o) =>
      o.state === "open" && keyOf(state, o)?.name === name && keyOf(state, o)?.incarnation === incarnation,
  );
}

/**
 * The invariants after a fault: each resource the provider bills now (`billing`: name and
 * incarnation, from the emulator's meter) has exactly one open obligation; no resource has two; every
 * discharged obligation carries evidence.
 */
export function expectObligationsCover(
  state: HostingState,
  billing: readonly { readonly name: string; readonly incarnation: string }[],
): void {
  for (const b of billing)
    expect(
      openFor(state, b.name, b.incarnation),
      `open obligation for billing ${b.name}@${b.incarnation}`,
    ).toHaveLength(1);
  const open = Object.values(state.obligations).filter((o) => o.state === "open");
  const keys = open.map((o) => JSON.stringify(keyOf(state, o) ?? o.deploymentId));
  expect(new Set(keys).size, "one open obligation per resource").toBe(keys.length);
  for (const o of Object.values(state.obligations).filter((x) => x.state === "discharged"))
    expect(o.evidence, `evidence of discharged ${o.deploymentId}`).toBeDefined();
}

/** Settle pending promises and I/O a little (real time), e.g. between virtual-time steps. */
export function breathe(ms = 20): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
