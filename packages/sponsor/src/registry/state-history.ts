/**
 * Each rented node's state history: every change of state (or of PAIR's cause for it) with its time
 * and cause (PAIR's action, a request's wake, else the provider's side), the last `maxPerNode` kept per node, in `<data_dir>/rented-state-history.json` (replaced
 * atomically), so it survives a restart. Fed level-triggered: `observe` is given what the nodes say
 * now, as often as the caller likes, and writes only when something changed.
 * Must not know: how states are probed, HTTP, who reads the history.
 */

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomically } from "@pair/cluster";
import type { RentedNodeView } from "./rented-view.js";

export const STATE_HISTORY_FILE = "rented-state-history.json";

/** Entries kept per node, by default. */
export const DEFAULT_STATE_HISTORY_PER_NODE = 50;

/** One change, as the admin API shows it. */
export interface StateChange {
  /** ISO time it was seen. */
  readonly at: string;
  readonly state: string;
  /**
   * Why: what PAIR did (paused by its sponsor, for the idle time, by the budget, at the sponsor's
   * exit; resumed by its sponsor; woken by a request from a node), else a change at the provider.
   */
  readonly reason: string | null;
}

/** What a node says now, and what PAIR did to it. */
export interface ObservedState {
  readonly name: string;
  readonly state: string;
  /** PAIR's own cause for the state it is in (who paused it), or null. */
  readonly cause: string | null;
  /** The provider's or the node's words for a change PAIR did not make (its last error), or null. */
  readonly detail: string | null;
  /** When its sponsor last resumed it (epoch ms), if ever. */
  readonly resumedAtMs?: number | undefined;
}

/** Which node's request (if any) reached a rented node since a time: the wake's cause. */
export type WokenBy = (name: string, sinceMs: number) => string | undefined;

/** Who paused a managed node, as people read it. */
const PAUSED_BY: Readonly<Record<string, string>> = {
  "user-request": "paused by its sponsor",
  idle: "paused: no PAIR workload for the idle time",
  "budget-exceeded": "paused: budget reached",
  "sponsor-exit": "paused: its sponsor stopped",
};

/** States in which a node is (coming) up: entering one from a resting state is a wake or a resume. */
const AWAKE: ReadonlySet<string> = new Set(["pending", "starting", "initializing", "warming", "running"]);

/** The words for a change no action of PAIR's explains. */
export const PROVIDER_SIDE = "provider-side change";

/** A rented node's state and what explains it. */
export function observedState(view: RentedNodeView): ObservedState {
  const pausedBy = view.managed?.paused_by ?? null;
  const resumedAt = Date.parse(view.managed?.resumed_at ?? "");
  let cause: string | null = null;
  if (pausedBy !== null && !AWAKE.has(view.state)) {
    cause = PAUSED_BY[pausedBy] ?? `paused (${pausedBy})`;
    // The budget's own words say until when (the window's reset, on the node's clock).
    const until = /paused until (\d{4}-\d\d-\d\dT[\d:.]+Z)/.exec(view.reason ?? "")?.[1];
    if (pausedBy === "budget-exceeded" && until !== undefined) cause += ` until ${until}`;
  }
  return {
    name: view.name,
    state: view.state,
    cause,
    detail: view.last_error,
    ...(Number.isNaN(resumedAt) ? {} : { resumedAtMs: resumedAt }),
  };
}

/** Why a node went from `last` to `now`'s state (or, first seen, why it is in it). */
function causeOf(last: StateChange | undefined, now: ObservedState, wokenBy: WokenBy | undefined): string {
  if (now.cause !== null) return now.cause;
  if (last === undefined) return now.detail ?? "first seen by PAIR";
  const sinceMs = Date.parse(last.at);
  if (AWAKE.has(now.state) && !AWAKE.has(last.state)) {
    if (now.resumedAtMs !== undefined && now.resumedAtMs >= sinceMs) return "resumed by its sponsor";
    const from = wokenBy?.(now.name, sinceMs);
    if (from !== undefined) return `woken by a request from ${from}`;
  }
  return now.detail === null ? PROVIDER_SIDE : `${PROVIDER_SIDE}: ${now.detail}`;
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

  /**
   * Record what changed since the last look, each change with its cause; true when anything did
   * (and was written). `wokenBy` names the node whose request reached a node since a time.
   */
  observe(now: readonly ObservedState[], atMs: number, wokenBy?: WokenBy): boolean {
    let changed = false;
    const at = new Date(atMs).toISOString();
    for (const n of now) {
      const list = this.#nodes.get(n.name) ?? [];
      const last = list[list.length - 1];
      // In the same state only a new cause of PAIR's is news (paused by its sponsor, then by the
      // budget); a cause going away, or the provider's words changing, is not.
      if (last !== undefined && last.state === n.state && (n.cause === null || n.cause === last.reason))
        continue;
      list.push({ at, state: n.state, reason: causeOf(last, n, wokenBy) });
      if (list.length > this.#maxPerNode) list.splice(0, list.length - this.#maxPerNode);
      this.#nodes.set(n.name, list);
      changed = true;
    }
    if (changed) this.#write();
    return changed;
  }

  /**
   * An event PAIR itself makes for `name`, not seen in a node's state: a batch's lifecycle
   * (submitted, rent, rental stopped, finished), kept and shown like a node's changes.
   */
  record(name: string, state: string, reason: string, atMs: number): void {
    const list = this.#nodes.get(name) ?? [];
    list.push({ at: new Date(atMs).toISOString(), state, reason });
    if (list.length > this.#maxPerNode) list.splice(0, list.length - this.#maxPerNode);
    this.#nodes.set(name, list);
    this.#write();
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
