/**
 * What `pair status`, `pair models`, `pair nodes`, `pair jobs` and `pair history` show a person: the admin API's
 * JSON turned into aligned text. Answers from the wire are checked just enough to fail with a clear
 * message rather than print nonsense (an array where one is expected, the fields a row needs).
 * Must not know: HTTP, flags, where the JSON came from.
 */

import type { WorkloadJson } from "../history/workload-history.js";
import { CliFailure } from "./cli-errors.js";
import {
  formatDurationMs,
  formatStartedAt,
  formatTokens,
  formatUsd,
  renderTable,
  UNKNOWN,
  type Column,
} from "./text-table.js";

export interface ModelJson {
  readonly model: string;
  readonly nodes: readonly string[];
  /** Each node's context window for the model, where known (absent from older nodes). */
  readonly context_tokens?: Readonly<Record<string, number>>;
}

interface EngineStatusJson {
  readonly name?: string;
  readonly api?: string;
  readonly base_url?: string;
  readonly healthy?: boolean;
  readonly models?: readonly string[];
  readonly in_flight?: number;
  readonly max_concurrent?: number;
  readonly last_error?: string | null;
}

export interface StatusJson {
  readonly node?: string;
  readonly version?: string;
  readonly listen?: string;
  readonly node_id?: string;
  readonly cluster_listen?: string;
  readonly data_dir?: string;
  readonly config_file?: string | null;
  readonly engines?: readonly EngineStatusJson[];
  readonly queued?: number;
  readonly running_workloads?: number;
  readonly peers?: readonly unknown[];
  readonly rented_nodes?: readonly unknown[];
  readonly open_stop_obligations?: readonly unknown[];
}

/** The node's answer for `what` is not what this pair reads (versions apart). */
export function unexpected(what: string): CliFailure {
  return new CliFailure(
    `the node's answer for ${what} has an unexpected shape — is pair older or newer than the node? ` +
      "Run `pair --version` and restart `pair serve` from the same install",
  );
}

export function asStatus(json: unknown): StatusJson {
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw unexpected("status");
  return json;
}

export function asModels(json: unknown): ModelJson[] {
  if (!Array.isArray(json)) throw unexpected("models");
  for (const item of json as unknown[]) {
    const m = item as Partial<ModelJson> | null;
    if (typeof m?.model !== "string" || !Array.isArray(m.nodes)) throw unexpected("models");
  }
  return json as ModelJson[];
}

export function asWorkloads(json: unknown, what: string): WorkloadJson[] {
  if (!Array.isArray(json)) throw unexpected(what);
  for (const item of json as unknown[]) {
    const w = item as Partial<WorkloadJson> | null;
    if (typeof w?.id !== "string" || typeof w.model !== "string" || typeof w.started_at !== "string")
      throw unexpected(what);
  }
  return json as WorkloadJson[];
}

const none = (list: readonly unknown[] | undefined): string =>
  list === undefined || list.length === 0 ? "none" : String(list.length);

export function statusLines(status: StatusJson): string[] {
  const version = status.version === undefined ? "" : `  (PAIR ${status.version})`;
  const facts = renderTable(
    [{ header: "" }, { header: "" }],
    [
      ["node", `${status.node ?? UNKNOWN}${version}`],
      ["listen", status.listen ?? UNKNOWN],
      ...(status.cluster_listen === undefined ? [] : [["cluster", status.cluster_listen]]),
      ...(status.node_id === undefined ? [] : [["node id", status.node_id]]),
      ["data dir", status.data_dir ?? UNKNOWN],
      ["config", status.config_file ?? "none (built-in defaults)"],
      ["workloads", `${status.running_workloads ?? 0} running, ${status.queued ?? 0} queued`],
      ["peers", none(status.peers)],
      ["rented nodes", none(status.rented_nodes)],
      ["stop obligations", none(status.open_stop_obligations)],
    ],
    { headers: false },
  );
  const engines = status.engines ?? [];
  if (engines.length === 0)
    return [...facts, "", "no engines configured (add some under engines: in the config)"];
  const columns: Column[] = [
    { header: "ENGINE" },
    { header: "API" },
    { header: "STATE" },
    { header: "IN FLIGHT", align: "right" },
    { header: "BASE URL" },
    { header: "MODELS" },
  ];
  const rows = engines.map((e) => [
    e.name ?? UNKNOWN,
    e.api ?? UNKNOWN,
    e.healthy === true ? "up" : "down",
    `${e.in_flight ?? 0}/${e.max_concurrent ?? UNKNOWN}`,
    e.base_url ?? UNKNOWN,
    e.healthy === true ? (e.models ?? []).join(", ") || "(none)" : `(${e.last_error ?? "not answering"})`,
  ]);
  return [...facts, "", ...renderTable(columns, rows)];
}

/** One node of `pair nodes`: this node, a peer, or a rented node (docs/reference.md's fields). */
export interface NodeJson {
  readonly name: string;
  readonly kind: string;
  readonly node_id?: string | null;
  readonly state: string;
  readonly models: readonly string[];
  readonly in_flight?: number;
  readonly capacity?: number;
  readonly last_seen?: string | null;
  readonly label?: string;
  readonly sponsor?: string;
  readonly shared?: boolean;
  readonly eligible?: boolean;
  readonly reason?: string | null;
  readonly warnings?: readonly string[];
  readonly spend_usd?: { readonly session: number; readonly day: number; readonly month: number } | null;
  readonly address?: string;
  readonly last_error?: string;
}

export function asNodes(json: unknown): NodeJson[] {
  if (!Array.isArray(json)) throw unexpected("nodes");
  for (const item of json as unknown[]) {
    const n = item as Partial<NodeJson> | null;
    if (typeof n?.name !== "string" || typeof n.state !== "string" || !Array.isArray(n.models))
      throw unexpected("nodes");
  }
  return json as NodeJson[];
}

export function nodeLines(nodes: readonly NodeJson[], nowMs: number): string[] {
  return renderTable(
    [
      { header: "NAME" },
      { header: "KIND" },
      { header: "STATE" },
      { header: "LOAD", align: "right" },
      { header: "LAST SEEN" },
      { header: "MODELS" },
    ],
    nodes.map((n) => (n.kind === "rented" ? rentedNodeRow(n) : memberRow(n, nowMs))),
  );
}

function memberRow(n: NodeJson, nowMs: number): string[] {
  return [
    n.name,
    n.kind,
    n.state,
    `${n.in_flight ?? 0}/${n.capacity ?? 0}`,
    n.kind === "self"
      ? "-"
      : (n.last_seen ?? null) === null
        ? "never"
        : formatStartedAt(n.last_seen ?? "", nowMs),
    n.state === "up" ? n.models.join(", ") || "(none)" : `(${n.last_error ?? "not answering"})`,
  ];
}

/** A rented node: labelled off-LAN, its sponsor where the last-seen time goes, and why it is not usable. */
function rentedNodeRow(n: NodeJson): string[] {
  const notes = [
    n.shared === true ? "shared" : "not shared",
    ...(n.spend_usd === undefined || n.spend_usd === null ? [] : [`$${n.spend_usd.day.toFixed(2)} today`]),
    ...(n.eligible === false ? [`ineligible: ${n.reason ?? "?"}`] : []),
    ...(n.warnings ?? []).map((w) => `warning: ${w}`),
  ];
  return [
    n.name,
    n.label ?? "Rented · off-LAN",
    n.state,
    "-",
    `via ${n.sponsor ?? "?"}`,
    `${n.models.join(", ") || "(none)"} [${notes.join("; ")}]`,
  ];
}

export function modelLines(models: readonly ModelJson[]): string[] {
  if (models.length === 0)
    return ["no models: no engine is up (see `pair status`), or none of them serves a model yet"];
  // The window each node holds, in the order of NODES (`?` where none is known).
  const windows = (m: ModelJson) => m.nodes.map((n) => m.context_tokens?.[n] ?? "?").join(", ");
  return renderTable(
    [{ header: "MODEL" }, { header: "NODES" }, { header: "CONTEXT" }],
    models.map((m) => [m.model, m.nodes.join(", "), windows(m)]),
  );
}

const WORKLOAD_COLUMNS: readonly Column[] = [
  { header: "ID" },
  { header: "MODEL" },
  { header: "ORIGIN" },
  { header: "SERVED BY" },
  { header: "ENGINE" },
  { header: "STATUS" },
  { header: "STARTED" },
  { header: "FIRST BYTE", align: "right" },
  { header: "DURATION", align: "right" },
  { header: "TOKENS IN/OUT", align: "right" },
  { header: "EST. COST", align: "right" },
];

/** The first block of a UUID is enough to tell rows apart on screen; `--json` has the full id. */
export function shortId(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}

/** Rows for jobs (running: duration so far) and history. `nowMs` decides "today" and running time. */
export function workloadLines(workloads: readonly WorkloadJson[], nowMs: number): string[] {
  const rows = workloads.map((w) => {
    const status =
      w.error_code === null || w.error_code === undefined ? w.status : `${w.status} (${w.error_code})`;
    const duration =
      w.duration_ms ?? (w.status === "running" ? Math.max(0, nowMs - Date.parse(w.started_at)) : null);
    return [
      shortId(w.id),
      w.model,
      w.origin_node,
      (w.serving_node ?? UNKNOWN) + (w.off_lan ? " (off-LAN)" : ""),
      w.engine ?? UNKNOWN,
      status,
      formatStartedAt(w.started_at, nowMs),
      formatDurationMs(w.first_byte_ms),
      formatDurationMs(duration),
      formatTokens(w.tokens_in, w.tokens_out),
      formatUsd(w.est_cost_usd),
    ];
  });
  return renderTable(WORKLOAD_COLUMNS, rows);
}
