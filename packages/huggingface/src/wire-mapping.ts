/**
 * Conversions between HF's wire models and the adapter's domain types: an endpoint answer to an
 * `HfEndpoint` (unknown states kept as `unrecognized`, unreported fields `undefined`), a spec to a
 * create body (never `public`), an update to a partial body, hardware listings to offers.
 * Must not know: HTTP, retries.
 */

import { canonicalIncarnation } from "@pair/provision";
import {
  HF_ENDPOINT_STATES,
  type HfAccount,
  type HfComputeOffer,
  type HfEndpoint,
  type HfEndpointSpec,
  type HfEndpointState,
  type HfEndpointUpdate,
} from "./model.js";
import type {
  WireCreateBody,
  WireEndpoint,
  WireProviderListing,
  WireUpdateBody,
  WireWhoami,
} from "./wire.js";

function knownState(state: string): HfEndpointState | "unrecognized" {
  return (HF_ENDPOINT_STATES as readonly string[]).includes(state)
    ? (state as HfEndpointState)
    : "unrecognized";
}

export function toEndpoint(namespace: string, wire: WireEndpoint): HfEndpoint {
  const { status } = wire;
  const scaling = wire.compute?.scaling;
  return {
    namespace,
    name: wire.name,
    incarnation: canonicalIncarnation(status.createdAt),
    createdAtMs: Date.parse(status.createdAt),
    updatedAtMs: Date.parse(status.updatedAt),
    state: knownState(status.state),
    rawState: status.state,
    message: status.errorMessage ?? status.message,
    url: typeof status.url === "string" && status.url !== "" ? status.url : undefined,
    accessType: wire.type,
    vendor: wire.provider?.vendor,
    region: wire.provider?.region,
    accelerator: wire.compute?.accelerator,
    instanceType: wire.compute?.instanceType,
    instanceSize: wire.compute?.instanceSize,
    minReplica: scaling?.minReplica,
    maxReplica: scaling?.maxReplica,
    scaleToZeroTimeoutMin: scaling?.scaleToZeroTimeout ?? undefined,
    readyReplicas: status.readyReplica,
    targetReplicas: status.targetReplica,
    repository: wire.model.repository,
    revision: wire.model.revision ?? undefined,
    task: wire.model.task ?? undefined,
    healthRoute: wire.healthRoute,
    tags: wire.tags ?? [],
    env: stringMap(wire.model.env),
  };
}

/** Only string values of a map HF echoed (anything else is dropped, never coerced). */
function stringMap(value: unknown): Readonly<Record<string, string>> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).filter(
      (entry): entry is [string, string] => typeof entry[1] === "string",
    ),
  );
}

export function toCreateBody(spec: HfEndpointSpec): WireCreateBody {
  const accessType: string = spec.accessType;
  if (accessType !== "private" && accessType !== "authenticated")
    throw new RangeError(
      `accessType: PAIR creates only private or authenticated endpoints, not "${accessType}"`,
    );
  return {
    name: spec.name,
    type: spec.accessType,
    provider: { vendor: spec.vendor, region: spec.region },
    compute: {
      accelerator: spec.accelerator,
      instanceType: spec.instanceType,
      instanceSize: spec.instanceSize,
      scaling: {
        minReplica: spec.minReplica,
        maxReplica: spec.maxReplica,
        ...(spec.scaleToZeroTimeoutMin === undefined
          ? {}
          : { scaleToZeroTimeout: spec.scaleToZeroTimeoutMin }),
      },
    },
    model: {
      repository: spec.repository,
      framework: spec.framework ?? "pytorch",
      revision: spec.revision ?? null,
      // HF refuses a null task: omit it when unknown.
      ...(spec.task === undefined ? {} : { task: spec.task }),
      image: spec.image ?? { huggingface: {} },
      ...(spec.env === undefined ? {} : { env: spec.env }),
      ...(spec.secrets === undefined ? {} : { secrets: spec.secrets }),
    },
    ...(spec.tags === undefined ? {} : { tags: spec.tags }),
  };
}

/** Only the given keys, nested (HF merges objects and replaces `image`, `env`, lists). */
export function toUpdateBody(update: HfEndpointUpdate): WireUpdateBody {
  const compact = (entries: Record<string, unknown>): Record<string, unknown> | undefined => {
    const kept = Object.entries(entries).filter(([, value]) => value !== undefined);
    return kept.length > 0 ? Object.fromEntries(kept) : undefined;
  };
  const scaling = compact({
    minReplica: update.minReplica,
    maxReplica: update.maxReplica,
    scaleToZeroTimeout: update.scaleToZeroTimeoutMin,
  });
  const compute = compact({
    accelerator: update.accelerator,
    instanceType: update.instanceType,
    instanceSize: update.instanceSize,
    scaling,
  });
  const model = compact({
    repository: update.repository,
    revision: update.revision,
    image: update.image,
    env: update.env,
  });
  return compact({ type: update.accessType, compute, model, tags: update.tags }) ?? {};
}

export function toAccount(wire: WireWhoami): HfAccount {
  return {
    name: wire.name,
    type: wire.type,
    orgs: (wire.orgs ?? []).map((org) => org.name),
    tokenRole: wire.auth?.accessToken?.role,
  };
}

export function toOffers(listing: WireProviderListing): HfComputeOffer[] {
  return listing.vendors.flatMap((vendor) =>
    vendor.regions.flatMap((region) =>
      region.computes.map((compute): HfComputeOffer => {
        const quota = compute.quota;
        const undeployable = compute.status === "deprecated" || compute.status === "not_available";
        const room =
          quota === undefined || quota.maxAccelerators - quota.usedAccelerators >= compute.numAccelerators;
        return {
          id: compute.id,
          vendor: vendor.name,
          region: region.name,
          accelerator: compute.accelerator,
          instanceType: compute.instanceType,
          instanceSize: compute.instanceSize,
          numAccelerators: compute.numAccelerators,
          architecture: compute.architecture,
          gpuMemoryGb: compute.gpuMemoryGb ?? undefined,
          status: compute.status,
          pricePerHourUsd: compute.pricePerHour,
          quota:
            quota === undefined
              ? undefined
              : { maxAccelerators: quota.maxAccelerators, usedAccelerators: quota.usedAccelerators },
          deployable: !undeployable && room,
        };
      }),
    ),
  );
}
