/**
 * What the cluster serves, as the OpenAI and Ollama model routes describe it: `GET /v1/models`,
 * `GET /v1/models/{id}`, `GET /api/tags`, `POST /api/show`, `GET /api/ps`. What an engine said of
 * its models is passed on; for a model several engines serve, the first engine in config order
 * that said something wins (deterministic). What nobody said is filled with Ollama's empty values
 * or left out, never invented (sizes, dates); peers' models carry no metadata in the peer inventory.
 * Must not know: routing, dialect translation, authentication.
 */

import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { engineUrl, type EngineModelMeta, type EngineState } from "../engines/engine-inventory.js";
import { pairErrorReply } from "../dialects/index.js";
import type { ClientApiDeps } from "./client-api.js";
import { NO_ALIASES } from "./model-aliases.js";
import { boundedText } from "../http/bounded-text.js";
import { jsonNestsDeeperThan } from "../http/json-depth.js";
import { readBody } from "../http/request-body.js";

/** An engine asked for /api/show or /api/ps answers within this, or is left out. */
const ENGINE_ASK_TIMEOUT_MS = 2_000;

/** The keys Ollama's `details` always carries, with its empty values. */
const EMPTY_DETAILS = {
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
function localOwners(deps: ClientApiDeps, model: string): { state: EngineState; name: string }[] {
  const names = (deps.aliases ?? NO_ALIASES).namesOf(model);
  const ordered = [model, ...names.filter((n) => n !== model)];
  return ordered.flatMap((name) =>
    deps.inventory.engines
      .filter((s) => s.healthy && s.models.includes(name))
      .map((state) => ({ state, name })),
  );
}

/** The first owner's value of one metadata field (config order). */
function firstMeta<K extends keyof EngineModelMeta>(
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

export function listOpenAiModels(deps: ClientApiDeps, res: ServerResponse): void {
  sendJson(res, 200, { object: "list", data: clusterModels(deps).map((id) => modelObject(deps, id)) });
}

/** `GET /v1/models/{id}` (the id URL-encoded, as the openai client sends it). */
export function retrieveOpenAiModel(deps: ClientApiDeps, res: ServerResponse, encodedId: string): void {
  let id: string;
  try {
    id = decodeURIComponent(encodedId);
  } catch {
    id = encodedId;
  }
  if (id !== "" && clusterServes(deps, id)) return sendJson(res, 200, modelObject(deps, id));
  const reply = pairErrorReply("openai", {
    code: "model_not_found",
    message: `model "${id}" not found on any node`,
  });
  sendJson(res, reply.status, reply.body);
}

/**
 * An id for `digest` when no engine gave one: Ollama's CLI shows its first 12 characters and needs
 * them. Derived from the name, so stable; not a content digest.
 */
function nameDigest(model: string): string {
  return createHash("sha256").update(`pair:${model}`).digest("hex");
}

function detailsOf(deps: ClientApiDeps, model: string): Record<string, unknown> {
  return { ...EMPTY_DETAILS, ...(firstMeta(deps, model, "details") ?? {}) };
}

export function ollamaTags(deps: ClientApiDeps, res: ServerResponse): void {
  sendJson(res, 200, {
    models: clusterModels(deps).map((name) => {
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
    }),
  });
}

/** GET or POST one engine route as JSON, or undefined when it does not answer 200 in time. */
async function askEngine(
  deps: ClientApiDeps,
  state: EngineState,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown> | undefined> {
  const url = engineUrl(state.spec, path);
  try {
    const res = await deps.dispatcher.request({
      origin: url.origin,
      path: url.pathname,
      method: body === undefined ? "GET" : "POST",
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
      headersTimeout: ENGINE_ASK_TIMEOUT_MS,
      bodyTimeout: ENGINE_ASK_TIMEOUT_MS,
      signal: AbortSignal.timeout(ENGINE_ASK_TIMEOUT_MS),
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      return undefined;
    }
    const text = await boundedText(res.body);
    if (jsonNestsDeeperThan(Buffer.from(text))) return undefined;
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Ollama's `/api/show`: the first local Ollama engine's own answer (config order), its `details`
 * completed; otherwise filled from what is known (vLLM's `max_model_len` as the context length).
 */
export async function ollamaShow(
  deps: ClientApiDeps,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const body = await readBody(req, 64 * 1024);
  let model: unknown;
  try {
    const parsed =
      body.ok && !jsonNestsDeeperThan(body.bytes)
        ? (JSON.parse(body.bytes.toString("utf8")) as Record<string, unknown>)
        : {};
    model = parsed["model"] ?? parsed["name"];
  } catch {
    model = undefined;
  }
  if (typeof model !== "string" || model === "")
    return sendJson(res, 400, { error: "model: expected a model name", code: "invalid_request" });
  if (!clusterServes(deps, model))
    return sendJson(res, 404, { error: `model "${model}" not found on any node`, code: "model_not_found" });
  for (const { state, name } of localOwners(deps, model)) {
    if (state.spec.api !== "ollama") continue;
    const shown = await askEngine(deps, state, "/api/show", { model: name });
    if (shown === undefined) continue;
    const details = typeof shown["details"] === "object" && shown["details"] !== null ? shown["details"] : {};
    return sendJson(res, 200, { ...shown, details: { ...EMPTY_DETAILS, ...details } });
  }
  const contextLength = firstMeta(deps, model, "maxModelLen");
  const modifiedAt = firstMeta(deps, model, "modifiedAt");
  sendJson(res, 200, {
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
  });
}

/**
 * Ollama's `/api/ps` for the cluster as this node knows it: each local Ollama engine's own `/api/ps`,
 * the models of local OpenAI engines (loaded while served), and running rented nodes' models; each
 * entry names its serving node (`node`) and engine. Peers' loaded models are not in the peer
 * inventory, so they are not listed.
 */
export async function ollamaPs(deps: ClientApiDeps, res: ServerResponse): Promise<void> {
  const healthy = deps.inventory.engines.filter((s) => s.healthy);
  const perEngine = await Promise.all(
    healthy.map(async (state) => {
      if (state.spec.api === "ollama") {
        const ps = await askEngine(deps, state, "/api/ps");
        const models = Array.isArray(ps?.["models"]) ? (ps["models"] as unknown[]) : [];
        return models
          .filter((m): m is Record<string, unknown> => typeof m === "object" && m !== null)
          .map((m) => ({ ...m, node: deps.nodeName, engine: state.spec.name }));
      }
      return state.models.map((name) => {
        const contextLength = state.meta?.get(name)?.maxModelLen;
        return {
          name,
          model: name,
          digest: nameDigest(name),
          details: detailsOf(deps, name),
          ...(contextLength === undefined ? {} : { context_length: contextLength }),
          node: deps.nodeName,
          engine: state.spec.name,
        };
      });
    }),
  );
  const rented = (deps.rentedNodes?.list() ?? [])
    .filter((r) => r.state === "running")
    .flatMap((r) =>
      r.models.map((name) => ({
        name,
        model: name,
        digest: nameDigest(name),
        details: { ...EMPTY_DETAILS },
        node: r.name,
        engine: r.provider,
      })),
    );
  const models = [...perEngine.flat(), ...rented];
  models.sort((a, b) => key(a).localeCompare(key(b)));
  sendJson(res, 200, { models });
}

function key(entry: Record<string, unknown>): string {
  return `${String(entry["node"])}\u0000${String(entry["engine"])}\u0000${String(entry["name"])}`;
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
