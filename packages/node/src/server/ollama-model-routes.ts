/**
 * Ollama's model routes for the cluster: `GET /api/tags`, `POST /api/show`, `GET /api/ps`. Sources in
 * a fixed order, first answer wins: this node's engines (config order), then up peers by name (asked
 * over the peer route API, each answering for its own engines and the rented nodes it shares:
 * `scope: "node"`), then what is known without asking (context windows, `details` keys). Sizes and
 * dates only as an engine gave them, never invented.
 * Must not know: routing, dialect translation, authentication.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { EngineState } from "../engines/engine-inventory.js";
import { jsonNestsDeeperThan } from "../http/json-depth.js";
import { readBody } from "../http/request-body.js";
import { askJson } from "./ask-json.js";
import type { ClientApiDeps } from "./client-api.js";
import {
  EMPTY_DETAILS,
  clusterModels,
  clusterServes,
  firstMeta,
  localOwners,
  nameDigest,
  namesInOrder,
  nodeModels,
  sendJson,
} from "./model-routes.js";
import { askPeers, peerServes, upPeers } from "./peer-questions.js";

/**
 * `cluster`: a client's question, answered for every node. `node`: a peer's, answered for this node's
 * engines and the rented nodes it shares only (the asking node merges).
 */
export type ModelScope = "cluster" | "node";

/**
 * Ollama's `expires_at` for a model that stays loaded (its own answer for `keep_alive: -1`: now plus
 * the largest Go duration); its CLI shows "Forever". A vLLM or llama.cpp server never unloads.
 */
const NEVER_UNLOADED_MS = 9_223_372_036_854;

function scopeModels(deps: ClientApiDeps, scope: ModelScope): string[] {
  return scope === "cluster" ? clusterModels(deps) : nodeModels(deps);
}

function objectsIn(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value)
    ? value.filter(
        (m): m is Record<string, unknown> => typeof m === "object" && m !== null && !Array.isArray(m),
      )
    : [];
}

function withDetails(entry: Record<string, unknown>): Record<string, unknown> {
  const details = entry["details"];
  return {
    ...entry,
    details: { ...EMPTY_DETAILS, ...(typeof details === "object" && details !== null ? details : {}) },
  };
}

function detailsOf(deps: ClientApiDeps, model: string): Record<string, unknown> {
  return { ...EMPTY_DETAILS, ...(firstMeta(deps, model, "details") ?? {}) };
}

function localTag(deps: ClientApiDeps, name: string): Record<string, unknown> {
  const modifiedAt = firstMeta(deps, name, "modifiedAt");
  const size = firstMeta(deps, name, "size");
  return {
    name,
    model: name,
    ...(modifiedAt === undefined ? {} : { modified_at: modifiedAt }),
    ...(size === undefined ? {} : { size }),
    digest: firstMeta(deps, name, "digest") ?? nameDigest(name),
    details: detailsOf(deps, name),
  };
}

/** Peers' `/api/tags` entries by model name, the first peer by name winning, for models no local engine serves. */
async function peerTags(
  deps: ClientApiDeps,
  names: readonly string[],
): Promise<Map<string, Record<string, unknown>>> {
  const byName = new Map<string, Record<string, unknown>>();
  const wanted = names.flatMap((n) => namesInOrder(deps, n));
  const peers = upPeers(deps, (m) => wanted.some((n) => peerServes(m, n)));
  if (peers.length === 0) return byName;
  for (const { answer } of await askPeers(deps, peers, "/api/tags"))
    for (const entry of objectsIn(answer["models"])) {
      const name = entry["name"];
      if (typeof name === "string" && !byName.has(name)) byName.set(name, entry);
    }
  return byName;
}

export async function ollamaTags(deps: ClientApiDeps, res: ServerResponse, scope: ModelScope): Promise<void> {
  const names = scopeModels(deps, scope);
  const unowned = names.filter((n) => localOwners(deps, n).length === 0);
  const fromPeers =
    scope === "cluster" && unowned.length > 0
      ? await peerTags(deps, unowned)
      : new Map<string, Record<string, unknown>>();
  const models = names.map((name) => {
    if (localOwners(deps, name).length > 0) return localTag(deps, name);
    const peer = namesInOrder(deps, name)
      .map((n) => fromPeers.get(n))
      .find((e) => e !== undefined);
    if (peer === undefined) return localTag(deps, name);
    return withDetails({ ...peer, name, model: name, digest: peer["digest"] ?? nameDigest(name) });
  });
  sendJson(res, 200, { models });
}

async function requestedModel(req: IncomingMessage): Promise<unknown> {
  const body = await readBody(req, 64 * 1024);
  try {
    const parsed =
      body.ok && !jsonNestsDeeperThan(body.bytes)
        ? (JSON.parse(body.bytes.toString("utf8")) as Record<string, unknown>)
        : {};
    return parsed["model"] ?? parsed["name"];
  } catch {
    return undefined;
  }
}

/** The context window known for `model` without asking: local engines, own rented nodes, peers' inventories. */
function knownWindow(deps: ClientApiDeps, model: string): number | undefined {
  for (const { state, name } of localOwners(deps, model)) {
    const tokens = state.windows?.get(name)?.tokens ?? state.meta?.get(name)?.maxModelLen;
    if (tokens !== undefined) return tokens;
  }
  for (const name of namesInOrder(deps, model)) {
    for (const r of deps.rentedNodes?.peerViews() ?? []) {
      const tokens = r.context_windows?.[name];
      if (tokens !== undefined) return tokens;
    }
    for (const m of upPeers(deps)) {
      const tokens =
        m.models.find((x) => x.model === name)?.context_window ??
        m.rented.map((r) => r.context_windows?.[name]).find((t) => t !== undefined);
      if (tokens !== undefined) return tokens;
    }
  }
  return undefined;
}

/** `/api/show` from what is known, for a model no Ollama engine answered for. */
function knownShow(deps: ClientApiDeps, model: string): Record<string, unknown> {
  const contextLength = knownWindow(deps, model);
  const modifiedAt = firstMeta(deps, model, "modifiedAt");
  return {
    license: "",
    modelfile: "",
    parameters: "",
    template: "",
    details: detailsOf(deps, model),
    // The architecture behind an OpenAI engine is unknown; clients read `<architecture>.context_length`.
    model_info:
      contextLength === undefined
        ? {}
        : { "general.architecture": "pair", "pair.context_length": contextLength },
    capabilities: ["completion"],
    ...(modifiedAt === undefined ? {} : { modified_at: modifiedAt }),
  };
}

/** The first local Ollama engine's own `/api/show` (config order), if one answers. */
async function localShow(deps: ClientApiDeps, model: string): Promise<Record<string, unknown> | undefined> {
  for (const { state, name } of localOwners(deps, model)) {
    if (state.spec.api !== "ollama") continue;
    const shown = await askEngine(deps, state, "/api/show", { model: name });
    if (shown !== undefined) return shown;
  }
  return undefined;
}

/** The first peer's `/api/show` (by name) for `model` or a name of its alias group. */
async function peerShow(deps: ClientApiDeps, model: string): Promise<Record<string, unknown> | undefined> {
  for (const name of namesInOrder(deps, model)) {
    const peers = upPeers(deps, (m) => peerServes(m, name));
    const [first] = peers.length === 0 ? [] : await askPeers(deps, peers, "/api/show", { model: name });
    if (first !== undefined) return first.answer;
  }
  return undefined;
}

function nodeServes(deps: ClientApiDeps, model: string): boolean {
  const served = new Set(nodeModels(deps));
  return namesInOrder(deps, model).some((n) => served.has(n));
}

/**
 * Ollama's `/api/show`: an Ollama engine's own answer (this node's first, then a peer's), its
 * `details` completed; otherwise filled from what is known (the context window as `context_length`).
 */
export async function ollamaShow(
  deps: ClientApiDeps,
  req: IncomingMessage,
  res: ServerResponse,
  scope: ModelScope,
): Promise<void> {
  const model = await requestedModel(req);
  if (typeof model !== "string" || model === "")
    return sendJson(res, 400, { error: "model: expected a model name", code: "invalid_request" });
  if (!(scope === "cluster" ? clusterServes(deps, model) : nodeServes(deps, model)))
    return sendJson(res, 404, { error: `model "${model}" not found on any node`, code: "model_not_found" });
  const shown =
    (await localShow(deps, model)) ??
    (scope === "cluster" && localOwners(deps, model).length === 0
      ? await peerShow(deps, model)
      : undefined) ??
    knownShow(deps, model);
  sendJson(res, 200, withDetails(shown));
}

async function enginePs(deps: ClientApiDeps, state: EngineState): Promise<Record<string, unknown>[]> {
  const serving = { node: deps.nodeName, engine: state.spec.name };
  if (state.spec.api === "ollama") {
    const ps = await askEngine(deps, state, "/api/ps");
    return objectsIn(ps?.["models"]).map((m) => ({ ...m, ...serving }));
  }
  // Loaded while served: an OpenAI-dialect server holds its models until it stops.
  const expiresAt = new Date(deps.clock.now().wallMs + NEVER_UNLOADED_MS).toISOString();
  return state.models.map((name) => {
    const contextLength = state.windows?.get(name)?.tokens ?? state.meta?.get(name)?.maxModelLen;
    return {
      name,
      model: name,
      digest: firstMeta(deps, name, "digest") ?? nameDigest(name),
      details: detailsOf(deps, name),
      expires_at: expiresAt,
      ...(contextLength === undefined ? {} : { context_length: contextLength }),
      ...serving,
    };
  });
}

/**
 * Running rented nodes' models; a managed node's `expires_at` is when its idle pause would stop it,
 * any other's Ollama's "never" (PAIR does not unload it; an entry without one reads "Stopping..." in
 * Ollama's CLI).
 */
function rentedPs(deps: ClientApiDeps, scope: ModelScope): Record<string, unknown>[] {
  const views = new Map((deps.rentedNodes?.peerViews() ?? []).map((v) => [v.name, v]));
  return (deps.rentedNodes?.list() ?? [])
    .filter((r) => r.state === "running" && (scope === "cluster" || r.shared))
    .flatMap((r) => {
      const idle = r.managed === null || r.managed.idle_pause_min <= 0 ? undefined : r.managed;
      const expiresAt = new Date(
        idle === undefined
          ? deps.clock.now().wallMs + NEVER_UNLOADED_MS
          : Date.parse(idle.last_active_at) + idle.idle_pause_min * 60_000,
      ).toISOString();
      return r.models.map((name) => {
        const contextLength = views.get(r.name)?.context_windows?.[name];
        return {
          name,
          model: name,
          digest: nameDigest(name),
          details: { ...EMPTY_DETAILS },
          expires_at: expiresAt,
          ...(contextLength === undefined ? {} : { context_length: contextLength }),
          node: r.name,
          engine: r.provider,
        };
      });
    });
}

/**
 * Ollama's `/api/ps` for the cluster: each local Ollama engine's own `/api/ps`, the models of local
 * OpenAI engines (loaded while served), running rented nodes' models, and (for a client) each up
 * peer's answer for itself; every entry names its serving node (`node`) and engine.
 */
export async function ollamaPs(deps: ClientApiDeps, res: ServerResponse, scope: ModelScope): Promise<void> {
  const [local, peers] = await Promise.all([
    Promise.all(deps.inventory.engines.filter((s) => s.healthy).map((s) => enginePs(deps, s))),
    scope === "cluster" ? askPeers(deps, upPeers(deps), "/api/ps") : Promise.resolve([]),
  ]);
  const fromPeers = peers.flatMap(({ peer, answer }) =>
    objectsIn(answer["models"]).map((m) => (typeof m["node"] === "string" ? m : { ...m, node: peer })),
  );
  const models = [...local.flat(), ...rentedPs(deps, scope), ...fromPeers];
  models.sort((a, b) => key(a).localeCompare(key(b)));
  sendJson(res, 200, { models });
}

function key(entry: Record<string, unknown>): string {
  return `${String(entry["node"])}\u0000${String(entry["engine"])}\u0000${String(entry["name"])}`;
}

function askEngine(
  deps: ClientApiDeps,
  state: EngineState,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown> | undefined> {
  return askJson({
    dispatcher: deps.dispatcher,
    baseUrl: state.spec.baseUrl,
    path,
    method: body === undefined ? "GET" : "POST",
    body,
  });
}
