/**
 * Live conformance steps for what PAIR creates having to serve: a running endpoint's `/v1/models`
 * (which names it lists: does vLLM on Hugging Face list the repository id?), a resume of a running
 * endpoint (the "already running" answer PAIR takes as success), the `createdAt` text of one
 * endpoint across answers (the same instant in one precision or several), and an endpoint deployed
 * through the catalog (its recipe's instance, image and scaling, and whether it serves `/v1`).
 * Must not know: the other steps, the report's file.
 */

import { canonicalIncarnation } from "@pair/provision";
import { HuggingFaceApiError, type EndpointsTransport, type HfEndpoint } from "../../src/index.js";

export interface HttpAnswer {
  readonly status: number | "no-answer";
  readonly body: string;
}

export interface ServingFindings {
  /** `/v1/models` of the running endpoint: the ids it lists. */
  models?: { status: number | "no-answer"; ids: string[]; listsRepository: boolean };
  /** A resume sent to the running endpoint through PAIR's transport. */
  resumeRunning?: { ok: boolean; state?: string; status?: number; message?: string };
  /** `status.createdAt` of one endpoint as each answer spelled it, and whether they are one instant. */
  createdAtTexts: string[];
  createdAtAgree: boolean;
  catalog: {
    repoId?: string;
    instance?: string;
    usdPerHour?: number;
    image?: unknown;
    scaling?: {
      minReplica: number | undefined;
      maxReplica: number | undefined;
      scaleToZeroTimeoutMin: number | undefined;
    };
    reachedState?: string;
    models?: { status: number | "no-answer"; ids: string[] };
    skipped?: string;
  };
}

export function emptyServingFindings(): ServingFindings {
  return { createdAtTexts: [], createdAtAgree: false, catalog: {} };
}

export interface ServingContext {
  readonly endpoints: EndpointsTransport;
  readonly namespace: string;
  /** The Endpoints API's base URL (the raw answers' text is read, not the transport's view). */
  readonly endpointsApi: string;
  /** A GET with the token. */
  get(url: string): Promise<HttpAnswer>;
  /** Polls `read` until `done` or the phase's deadline; the last value. */
  until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T>;
  /** The endpoint names to delete in cleanup. */
  readonly created: Set<string>;
}

function json(answer: HttpAnswer): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(answer.body);
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The endpoint as the Endpoints API spelled it (the transport normalises times and drops the image). */
async function raw(c: ServingContext, name: string): Promise<Record<string, unknown>> {
  return json(await c.get(`${c.endpointsApi}/v2/endpoint/${c.namespace}/${name}`));
}

function createdAtText(endpoint: Record<string, unknown>): string | undefined {
  const status = endpoint["status"] as { createdAt?: unknown } | undefined;
  return typeof status?.createdAt === "string" ? status.createdAt : undefined;
}

function ids(answer: HttpAnswer): string[] {
  try {
    const data = (JSON.parse(answer.body) as { data?: { id?: unknown }[] }).data ?? [];
    return data.flatMap((m) => (typeof m.id === "string" ? [m.id] : []));
  } catch {
    return [];
  }
}

/** On the running endpoint: what `/v1/models` lists, a resume while running, `createdAt` across answers. */
export async function runningChecks(
  c: ServingContext,
  running: HfEndpoint,
  f: ServingFindings,
): Promise<void> {
  const models = await c.get(`${(running.url ?? "").replace(/\/+$/, "")}/v1/models`);
  const served = ids(models);
  f.models = { status: models.status, ids: served, listsRepository: served.includes(running.repository) };
  try {
    const resumed = await c.endpoints.resume(c.namespace, running.name);
    f.resumeRunning = { ok: true, state: resumed.rawState };
  } catch (error) {
    if (!(error instanceof HuggingFaceApiError)) throw error;
    f.resumeRunning = { ok: false, ...(error.status === undefined ? {} : { status: error.status }) };
    if (error.providerMessage !== undefined) f.resumeRunning.message = error.providerMessage;
  }
  const listing = json(await c.get(`${c.endpointsApi}/v2/endpoint/${c.namespace}`))["items"];
  const listed = Array.isArray(listing)
    ? (listing as Record<string, unknown>[]).find((e) => e["name"] === running.name)
    : undefined;
  const answers = [await raw(c, running.name), await raw(c, running.name), ...(listed ? [listed] : [])];
  f.createdAtTexts = answers.flatMap((a) => createdAtText(a) ?? []);
  f.createdAtAgree =
    f.createdAtTexts.length > 0 && new Set(f.createdAtTexts.map(canonicalIncarnation)).size === 1;
}

/**
 * Deploy `repoId` through the catalog, record what the recipe chose, wait for it to run, ask its
 * `/v1/models`, delete it. `priceOf` prices the instance it got; past `maxUsdPerHour` it is deleted at once.
 */
export async function catalogChecks(
  c: ServingContext,
  o: { readonly repoId: string; readonly name: string; readonly maxUsdPerHour: number },
  priceOf: (endpoint: HfEndpoint) => Promise<number | undefined>,
  f: ServingFindings,
): Promise<void> {
  const catalog = await c.endpoints.catalog();
  f.catalog.repoId = o.repoId;
  if (!catalog.includes(o.repoId)) {
    f.catalog.skipped = `${o.repoId} is not in the catalog (${catalog.length} models listed)`;
    return;
  }
  c.created.add(o.name);
  const deployed = await c.endpoints.deployFromCatalog({
    namespace: c.namespace,
    repoId: o.repoId,
    endpointName: o.name,
    accelerator: "gpu",
  });
  f.catalog.instance = `${deployed.instanceType ?? "?"} ${deployed.instanceSize ?? "?"}`;
  const model = (await raw(c, o.name))["model"] as { image?: unknown } | undefined;
  f.catalog.image = model?.image;
  f.catalog.scaling = {
    minReplica: deployed.minReplica,
    maxReplica: deployed.maxReplica,
    scaleToZeroTimeoutMin: deployed.scaleToZeroTimeoutMin,
  };
  const price = await priceOf(deployed);
  if (price !== undefined) f.catalog.usdPerHour = price;
  if (price === undefined || price > o.maxUsdPerHour) {
    f.catalog.skipped = `its instance costs ${price ?? "an unlisted price"} $/h (budget ${o.maxUsdPerHour}): deleted at once`;
  } else {
    const get = () => c.endpoints.getEndpoint(c.namespace, o.name);
    const running = await c.until(get, (ep) => ep.state === "running" || ep.state === "failed");
    f.catalog.reachedState = running.rawState;
    if (running.state === "running") {
      const models = await c.get(`${(running.url ?? "").replace(/\/+$/, "")}/v1/models`);
      f.catalog.models = { status: models.status, ids: ids(models) };
    }
  }
  await c.endpoints.deleteEndpoint(c.namespace, o.name);
  c.created.delete(o.name);
}
