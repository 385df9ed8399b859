/**
 * Hugging Face's JSON as it travels (reference §1.3, §2.2–2.4, §4.1): typed wire models and
 * readers that check what clients index directly (an answer missing `name`, `status.state` or
 * `status.createdAt` is a protocol error, not a silent default). Optional fields stay optional.
 * Must not know: PAIR's domain types (wire-mapping.ts converts), HTTP.
 */

export interface WireEndpointStatus {
  readonly state: string;
  readonly message?: string;
  readonly errorMessage?: string;
  readonly url?: string | null;
  readonly readyReplica?: number;
  readonly targetReplica?: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface WireEndpoint {
  readonly name: string;
  readonly type: string;
  readonly accountId?: string | null;
  readonly provider?: { readonly vendor?: string; readonly region?: string };
  readonly compute?: {
    readonly id?: string;
    readonly accelerator?: string;
    readonly instanceType?: string;
    readonly instanceSize?: string;
    readonly scaling?: {
      readonly minReplica?: number;
      readonly maxReplica?: number;
      readonly scaleToZeroTimeout?: number | null;
    };
  };
  readonly model: {
    readonly repository: string;
    readonly framework?: string;
    readonly revision?: string | null;
    readonly task?: string | null;
    readonly env?: Readonly<Record<string, string>>;
  };
  readonly healthRoute?: string;
  readonly tags?: readonly string[];
  readonly status: WireEndpointStatus;
}

export interface WireEndpointList {
  readonly items: readonly WireEndpoint[];
}

export interface WireCreateBody {
  readonly name: string;
  readonly type: string;
  readonly provider: { readonly vendor: string; readonly region: string };
  readonly compute: {
    readonly accelerator: string;
    readonly instanceType: string;
    readonly instanceSize: string;
    readonly scaling: {
      readonly minReplica: number;
      readonly maxReplica: number;
      readonly scaleToZeroTimeout?: number;
    };
  };
  readonly model: {
    readonly repository: string;
    readonly framework: string;
    readonly revision: string | null;
    readonly task?: string;
    readonly image: Readonly<Record<string, unknown>>;
    readonly env?: Readonly<Record<string, string>>;
    readonly secrets?: Readonly<Record<string, string>>;
  };
  readonly tags?: readonly string[];
}

/** A partial create body: only changed keys, nested objects holding only their changed keys. */
export type WireUpdateBody = Readonly<Record<string, unknown>>;

export interface WireWhoami {
  readonly type: string;
  readonly name: string;
  readonly orgs?: readonly { readonly name: string }[];
  readonly auth?: { readonly accessToken?: { readonly role?: string } };
}

export interface WireCompute {
  readonly id: string;
  readonly accelerator: string;
  readonly numAccelerators: number;
  readonly instanceType: string;
  readonly instanceSize: string;
  readonly architecture?: string;
  readonly gpuMemoryGb?: number | null;
  readonly status: string;
  readonly pricePerHour: number;
  readonly quota?: { readonly maxAccelerators: number; readonly usedAccelerators: number };
}

export interface WireProviderListing {
  readonly vendors: readonly {
    readonly name: string;
    readonly regions: readonly { readonly name: string; readonly computes: readonly WireCompute[] }[];
  }[];
}

export interface WireCatalogRepoList {
  readonly models: readonly string[];
}

export interface WireCatalogDeployBody {
  readonly namespace: string;
  readonly repoId: string;
  readonly endpointName?: string;
  readonly accelerator?: string;
}

/** A wire answer that does not have a field clients rely on. */
export class WireShapeError extends Error {
  constructor(what: string) {
    super(what);
    this.name = "WireShapeError";
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function need(value: unknown, path: string, type: "string" | "number"): void {
  if (typeof value !== type)
    throw new WireShapeError(`${path}: expected a ${type}, got ${JSON.stringify(value) ?? "nothing"}`);
}

export function readEndpoint(value: unknown, path = "endpoint"): WireEndpoint {
  if (!isObject(value)) throw new WireShapeError(`${path}: expected an object`);
  need(value["name"], `${path}.name`, "string");
  need(value["type"], `${path}.type`, "string");
  const model = value["model"];
  if (!isObject(model)) throw new WireShapeError(`${path}.model: expected an object`);
  need(model["repository"], `${path}.model.repository`, "string");
  const status = value["status"];
  if (!isObject(status)) throw new WireShapeError(`${path}.status: expected an object`);
  need(status["state"], `${path}.status.state`, "string");
  need(status["createdAt"], `${path}.status.createdAt`, "string");
  need(status["updatedAt"], `${path}.status.updatedAt`, "string");
  if (Number.isNaN(Date.parse(status["createdAt"] as string)))
    throw new WireShapeError(`${path}.status.createdAt: not an RFC 3339 time`);
  return value as unknown as WireEndpoint;
}

export function readEndpointList(value: unknown): WireEndpointList {
  if (!isObject(value) || !Array.isArray(value["items"]))
    throw new WireShapeError("list: expected { items: [...] }");
  return { items: value["items"].map((item: unknown, index) => readEndpoint(item, `items[${index}]`)) };
}

export function readWhoami(value: unknown): WireWhoami {
  if (!isObject(value)) throw new WireShapeError("whoami: expected an object");
  need(value["name"], "whoami.name", "string");
  need(value["type"], "whoami.type", "string");
  return value as unknown as WireWhoami;
}

export function readProviderListing(value: unknown): WireProviderListing {
  if (!isObject(value) || !Array.isArray(value["vendors"]))
    throw new WireShapeError("provider: expected { vendors: [...] }");
  value["vendors"].forEach((vendor: unknown, v) => {
    if (!isObject(vendor) || !Array.isArray(vendor["regions"]))
      throw new WireShapeError(`vendors[${v}]: expected { name, regions: [...] }`);
    need(vendor["name"], `vendors[${v}].name`, "string");
    vendor["regions"].forEach((region: unknown, r) => {
      if (!isObject(region) || !Array.isArray(region["computes"]))
        throw new WireShapeError(`vendors[${v}].regions[${r}]: expected { name, computes: [...] }`);
      region["computes"].forEach((compute: unknown, c) => {
        const path = `vendors[${v}].regions[${r}].computes[${c}]`;
        if (!isObject(compute)) throw new WireShapeError(`${path}: expected an object`);
        for (const key of ["id", "accelerator", "instanceType", "instanceSize", "status"])
          need(compute[key], `${path}.${key}`, "string");
        need(compute["pricePerHour"], `${path}.pricePerHour`, "number");
        need(compute["numAccelerators"], `${path}.numAccelerators`, "number");
      });
    });
  });
  return value as unknown as WireProviderListing;
}

export function readCatalogRepoList(value: unknown): WireCatalogRepoList {
  if (
    !isObject(value) ||
    !Array.isArray(value["models"]) ||
    !value["models"].every((m) => typeof m === "string")
  )
    throw new WireShapeError("repo-list: expected { models: [string] }");
  return value as unknown as WireCatalogRepoList;
}

export function readCatalogDeploy(value: unknown): WireEndpoint {
  if (!isObject(value)) throw new WireShapeError("deploy: expected { endpoint: {...} }");
  return readEndpoint(value["endpoint"], "deploy.endpoint");
}
