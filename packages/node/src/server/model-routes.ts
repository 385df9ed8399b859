/**
 * What the cluster serves, as the OpenAI model routes describe it (`GET /v1/models`,
 * `GET /v1/models/{id}`), and what the Ollama ones (ollama-model-routes.ts) build on: the models a
 * client may ask for, their local owners, and the first owner's metadata. What an engine said of its
 * models is passed on; for a model several engines serve, the first engine in config order that said
 * something wins (deterministic). What nobody said is left out or empty, never invented.
 * Must not know: routing, dialect translation, authentication.
 */

import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { EngineModelMeta, EngineState } from "../engines/engine-inventory.js";
import { pairErrorReply } from "@pair/dialects";
import type { ClientApiDeps } from "./client-api.js";
import { NO_ALIASES } from "./model-aliases.js";
import { askPeers, peerServes, upPeers } from "./peer-questions.js";

/** The keys Ollama's `details` always carries, with its empty values. */
export const EMPTY_DETAILS = {
  parent_model: "",
  format: "",
  family: "",
  families: null,
  parameter_size: "",
  quantization_level: "",
} as const;

/**
 * Every model a client may ask for here: this node's engines', its rented nodes', the up peers' and
 * their rented nodes', and the aliases of any of them (sorted, unique).
 */
export function clusterModels(deps: ClientApiDeps): string[] {
  const models = new Set(deps.inventory.models().keys());
  for (const rented of deps.rentedNodes?.list() ?? []) for (const model of rented.models) models.add(model);
  for (const peer of deps.membership?.members() ?? [])
    if (peer.state === "up") {
      for (const { model } of peer.models) models.add(model);
      for (const rented of peer.rented) for (const model of rented.models) models.add(model);
    }
  // An alias is listed when any name of its group is served (`model_aliases:`).
  return [...(deps.aliases ?? NO_ALIASES).withAliases(models)].sort();
}

/** Some node serves `model`, or another name of its alias group. */
export function clusterServes(deps: ClientApiDeps, model: string): boolean {
  return (deps.aliases ?? NO_ALIASES).namesOf(model).some((name) => servesExactly(deps, name));
}

function servesExactly(deps: ClientApiDeps, model: string): boolean {
  if (deps.inventory.models().has(model)) return true;
  if ((deps.rentedNodes?.list() ?? []).some((r) => r.models.includes(model))) return true;
  return (deps.membership?.members() ?? []).some(
    (p) =>
      p.state === "up" &&
      (p.models.some((m) => m.model === model) || p.rented.some((r) => r.models.includes(model))),
  );
}

/** Healthy local engines serving `model` (or a name of its alias group), in config order, with the name. */
export function localOwners(deps: ClientApiDeps, model: string): { state: EngineState; name: string }[] {
  const names = (deps.aliases ?? NO_ALIASES).namesOf(model);
  const ordered = [model, ...names.filter((n) => n !== model)];
  return ordered.flatMap((name) =>
    deps.inventory.engines
      .filter((s) => s.healthy && s.models.includes(name))
      .map((state) => ({ state, name })),
  );
}

/** The first owner's value of one metadata field (config order). */
export function firstMeta<K extends keyof EngineModelMeta>(
  deps: ClientApiDeps,
  model: string,
  key: K,
): EngineModelMeta[K] | undefined {
  for (const { state, name } of localOwners(deps, model)) {
    const value = state.meta?.get(name)?.[key];
    if (value !== undefined) return value;
  }
  return undefined;
}

/**
 * OpenAI's Model object: the engine's `created`/`owned_by` when it gave them; for an Ollama engine's
 * model, `created` is its `modified_at` in seconds (what Ollama's own /v1/models answers).
 */
function modelObject(deps: ClientApiDeps, id: string): Record<string, unknown> {
  const modifiedAt = firstMeta(deps, id, "modifiedAt");
  return {
    id,
    object: "model",
    created:
      firstMeta(deps, id, "created") ??
      (modifiedAt === undefined ? 0 : Math.floor(Date.parse(modifiedAt) / 1000)),
    owned_by: firstMeta(deps, id, "ownedBy") ?? "pair",
  };
}

/** `model` first, then the other names of its alias group. */
export function namesInOrder(deps: ClientApiDeps, model: string): string[] {
  const names = (deps.aliases ?? NO_ALIASES).namesOf(model);
  return [model, ...names.filter((n) => n !== model)];
}

/** Models this node answers for to a peer: its engines' and those of the rented nodes it shares. */
export function nodeModels(deps: ClientApiDeps): string[] {
  const models = new Set(deps.inventory.models().keys());
  for (const r of deps.rentedNodes?.list() ?? []) if (r.shared) for (const m of r.models) models.add(m);
  return [...models].sort();
}

/** Peers' Model objects by id (the first peer by name wins), for the ids no local engine serves. */
async function peerModelObjects(
  deps: ClientApiDeps,
  ids: readonly string[],
): Promise<Map<string, Record<string, unknown>>> {
  const byId = new Map<string, Record<string, unknown>>();
  const wanted = ids
    .filter((id) => localOwners(deps, id).length === 0)
    .flatMap((id) => namesInOrder(deps, id));
  const peers = wanted.length === 0 ? [] : upPeers(deps, (m) => wanted.some((n) => peerServes(m, n)));
  if (peers.length === 0) return byId;
  for (const { answer } of await askPeers(deps, peers, "/v1/models"))
    for (const entry of Array.isArray(answer["data"]) ? (answer["data"] as unknown[]) : []) {
      const id = (entry as Record<string, unknown> | null)?.["id"];
      if (typeof id === "string" && !byId.has(id)) byId.set(id, entry as Record<string, unknown>);
    }
  return byId;
}

/** A Model object: a local engine's metadata, else a peer's `created`/`owned_by`, else `0`/`pair`. */
function clusterModelObject(
  deps: ClientApiDeps,
  id: string,
  fromPeers: ReadonlyMap<string, Record<string, unknown>>,
): Record<string, unknown> {
  const local = modelObject(deps, id);
  if (localOwners(deps, id).length > 0) return local;
  const peer = namesInOrder(deps, id)
    .map((n) => fromPeers.get(n))
    .find((e) => e !== undefined);
  return {
    ...local,
    ...(typeof peer?.["created"] === "number" ? { created: peer["created"] } : {}),
    ...(typeof peer?.["owned_by"] === "string" ? { owned_by: peer["owned_by"] } : {}),
  };
}

/** `GET /v1/models`; for a peer (`node`), this node's own models only. */
export async function listOpenAiModels(
  deps: ClientApiDeps,
  res: ServerResponse,
  scope: "cluster" | "node",
): Promise<void> {
  const ids = scope === "cluster" ? clusterModels(deps) : nodeModels(deps);
  const fromPeers =
    scope === "cluster" ? await peerModelObjects(deps, ids) : new Map<string, Record<string, unknown>>();
  sendJson(res, 200, { object: "list", data: ids.map((id) => clusterModelObject(deps, id, fromPeers)) });
}

/** `GET /v1/models/{id}` (the id URL-encoded, as the openai client sends it). */
export async function retrieveOpenAiModel(
  deps: ClientApiDeps,
  res: ServerResponse,
  encodedId: string,
): Promise<void> {
  let id: string;
  try {
    id = decodeURIComponent(encodedId);
  } catch {
    id = encodedId;
  }
  if (id !== "" && clusterServes(deps, id))
    return sendJson(res, 200, clusterModelObject(deps, id, await peerModelObjects(deps, [id])));
  const reply = pairErrorReply("openai", {
    code: "model_not_found",
    message: `model "${id}" not found on any node`,
  });
  sendJson(res, reply.status, reply.body);
}

/**
 * An id for `digest` when no engine gave one: Ollama's CLI shows its first 12 characters and needs
 * them. Derived from the name, so stable (and the same on every node); not a content digest.
 */
export function nameDigest(model: string): string {
  return createHash("sha256").update(`pair:${model}`).digest("hex");
}

/** A JSON answer (a string body is sent as it is). */
/** `extra`: more headers (an error's `Retry-After`, pair-errors.ts). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  extra?: Readonly<Record<string, string>>,
): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const headers: Record<string, string> = {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(text)),
  };
  if (extra !== undefined) for (const name in extra) headers[name] = extra[name]!;
  res.writeHead(status, headers);
  res.end(text);
}
