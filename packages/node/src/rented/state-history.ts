/**
 * Each rented node's state history: every change of state (or of the reason it gives) with its time,
 * the last `maxPerNode` kept per node, in `<data_dir>/rented-state-history.json` (replaced
 * atomically), so it survives a restart. Fed level-triggered: `observe` is given what the nodes say
 * now, as often as the caller likes, and writes only when something changed.
 * Must not know: how states are probed, HTTP, who reads the history.
 */

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomically } from "../files/atomic-file.js";
import type { RentedNodeView } from "./rented-nodes.js";

export const STATE_HISTORY_FILE = "rented-state-history.json";

/** Entries kept per node, by default. */
export const DEFAULT_STATE_HISTORY_PER_NODE = 50;

/** One change, as the admin API shows it. */
export interface StateChange {
  /** ISO time it was seen. */
  readonly at: string;
  readonly state: string;
  /** Why (the node's reason, who paused it, the provider's message), or null. */
  readonly reason: string | null;
}

/** What a node says now. */
export interface ObservedState {
  readonly name: string;
  readonly state: string;
  readonly reason: string | null;
}

/** Who paused a managed node, as people read it. */
const PAUSED_BY: Readonly<Record<string, string>> = {
  "user-request": "paused by its sponsor",
  idle: "paused: no PAIR workload for the idle time",
  "budget-exceeded": "paused: budget reached",
  "sponsor-exit": "paused: its sponsor stopped",
};

/** A rented node's state and the reason worth keeping with it. */
export function observedState(view: RentedNodeView): ObservedState {
  const pausedBy = view.managed?.paused_by ?? null;
  const reason =
    view.state === "paused" && pausedBy !== null
      ? (PAUSED_BY[pausedBy] ?? `paused (${pausedBy})`)
      : (view.reason ?? view.last_error);
  return { name: view.name, state: view.state, reason };
}

interface HistoryFile {
  readonly version: 1;
  readonly nodes: Record<string, StateChange[]>;
}

export interface StateHistoryOptions {
  readonly dataDir: string;
  readonly maxPerNode?: number;
  readonly log?: (line: string) => void;
}

export class RentedStateHistory {
  readonly #path: string;
  readonly #maxPerNode: number;
  readonly #nodes: Map<string, StateChange[]>;

  constructor(options: StateHistoryOptions) {
    const max = options.maxPerNode ?? DEFAULT_STATE_HISTORY_PER_NODE;
    if (!Number.isInteger(max) || max < 1 || max > 10_000)
      throw new RangeError(`maxPerNode: expected an integer 1..10000, got ${max}`);
    this.#maxPerNode = max;
    this.#path = join(options.dataDir, STATE_HISTORY_FILE);
    this.#nodes = new Map(Object.entries(readFile(this.#path, options.log).nodes));
  }

  /** Record what changed since the last look; true when anything did (and was written). */
  observe(now: readonly ObservedState[], atMs: number): boolean {
    let changed = false;
    const at = new Date(atMs).toISOString();
    for (const n of now) {
      const list = this.#nodes.get(n.name) ?? [];
      const last = list[list.length - 1];
      // A reason that goes away while the state stays is no news (a resume clears who paused it
      // a moment before the node reports its new state).
      if (last !== undefined && last.state === n.state && (last.reason === n.reason || n.reason === null))
        continue;
      list.push({ at, state: n.state, reason: n.reason });
      if (list.length > this.#maxPerNode) list.splice(0, list.length - this.#maxPerNode);
      this.#nodes.set(n.name, list);
      changed = true;
    }
    if (changed) this.#write();
    return changed;
  }

  /** A node's changes, oldest first (empty for a node never seen). */
  list(name: string): readonly StateChange[] {
    return [...(this.#nodes.get(name) ?? [])];
  }

  #write(): void {
    const file: HistoryFile = { version: 1, nodes: Object.fromEntries(this.#nodes) };
    writeFileAtomically(this.#path, JSON.stringify(file) + "\n");
  }
}

/** The file, or an empty history when it is absent or unreadable (said in the log: history only). */
function readFile(path: string, log: ((line: string) => void) | undefined): HistoryFile {
  if (!existsSync(path)) return { version: 1, nodes: {} };
  try {
    const json = JSON.parse(readFileSync(path, "utf8")) as Partial<HistoryFile>;
    if (json.version !== 1 || typeof json.nodes !== "object" || json.nodes === null)
      throw new Error("not a version 1 state history");
    const nodes: Record<string, StateChange[]> = {};
    for (const [name, list] of Object.entries(json.nodes))
      if (Array.isArray(list)) nodes[name] = list.filter(isChange);
    return { version: 1, nodes };
  } catch (cause) {
    log?.(`${path}: ${String(cause)}: starting the rented nodes' state history afresh`);
    return { version: 1, nodes: {} };
  }
}

function isChange(v: unknown): v is StateChange {
  const c = v as Partial<StateChange> | null;
  return (
    typeof c === "object" &&
    c !== null &&
    typeof c.at === "string" &&
    typeof c.state === "string" &&
    (c.reason === null || typeof c.reason === "string")
  );
}
