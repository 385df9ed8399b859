/**
 * Hugging Face's wire shapes as the emulator sends them: the Endpoint object (every key
 * huggingface_hub indexes directly, reference §2.4), whoami-v2, the provider hardware matrix, and the
 * error body `{"error": "<message>"}` that every HF client parses. Pure builders over plain values.
 * Must not know: routes, sockets, how states change.
 */

import { redactedJson } from "./endpoint-config.js";
import { computeId, type ComputeOption } from "./hardware.js";
import type { Account } from "./tokens.js";
import type { EndpointRecord } from "./world.js";

/** A fixed revision for endpoints created without one ("latest" resolved to a commit). */
const LATEST_REVISION = "c1899de289a04d12100db370d81485cdf75e47ca";

/** An ms-precision ISO instant spelled with `digits` fraction digits (sub-ms digits from `subMs`). */
function spelled(isoMs: string, digits: 3 | 6 | 9, subMs = "000000"): string {
  return `${isoMs.slice(0, 23)}${subMs.slice(0, digits - 3)}Z`;
}

/** Whether `status.url` is reported: absent while pending, paused or failed (reference §2.4). */
function hasUrl(record: EndpointRecord): boolean {
  return record.state !== "pending" && record.state !== "paused" && record.state !== "failed";
}

export function endpointUrl(baseUrl: string, record: EndpointRecord): string {
  return `${baseUrl}/endpoints/${record.label}`;
}

export function renderEndpoint(
  record: EndpointRecord,
  baseUrl: string,
  userId: (name: string) => string,
  timeDigits: 3 | 6 | 9 = 9,
): Record<string, unknown> {
  const json = redactedJson(record.config);
  const model = json["model"] as Record<string, unknown>;
  const compute = json["compute"] as Record<string, unknown>;
  const scaling = compute["scaling"] as Record<string, unknown>;
  const ready = record.state === "running" || record.state === "updating" || record.state === "updateFailed";
  return {
    ...json,
    name: record.config.name,
    type: record.config.type,
    accountId: json["accountId"] ?? null,
    provider: { vendor: record.config.vendor, region: record.config.region },
    compute: {
      ...compute,
      // What it runs on now (an update may have changed it): clients show these as its GPU.
      accelerator: record.config.accelerator,
      instanceType: record.config.instanceType,
      instanceSize: record.config.instanceSize,
      id: computeId(record.config),
      scaling: { scaleToZeroTimeout: null, ...scaling },
    },
    model: {
      ...model,
      revision: model["revision"] ?? LATEST_REVISION,
      task: model["task"] ?? "text-generation",
    },
    healthRoute: "/health",
    tags: json["tags"] ?? [],
    status: {
      state: record.state,
      message: record.message,
      ...(record.state === "failed" || record.state === "updateFailed"
        ? { errorMessage: record.message }
        : {}),
      url: hasUrl(record) ? endpointUrl(baseUrl, record) : null,
      readyReplica: ready ? Math.max(1, record.config.minReplica) : 0,
      targetReplica:
        record.state === "paused" || record.state === "scaledToZero" || record.state === "failed"
          ? 0
          : Math.max(1, record.config.minReplica),
      private: null,
      createdAt: spelled(record.createdAt, timeDigits, record.createdAtSubMs),
      createdBy: { id: userId(record.createdBy), name: record.createdBy },
      updatedAt: spelled(new Date(record.updatedAtMs).toISOString(), timeDigits),
      updatedBy: { id: userId(record.updatedBy), name: record.updatedBy },
    },
  };
}

export function renderWhoami(account: Account): Record<string, unknown> {
  return {
    type: "user",
    id: account.id,
    name: account.namespace,
    fullname: account.namespace,
    email: `${account.namespace}@example.invalid`,
    emailVerified: true,
    isPro: false,
    canPay: true,
    avatarUrl: "",
    periodEnd: null,
    billingMode: "postpaid",
    orgs: account.orgs.map((org) => ({
      type: "org",
      id: org.padEnd(24, "0").slice(0, 24),
      name: org,
      fullname: org,
      canPay: true,
      avatarUrl: "",
      periodEnd: null,
      email: null,
    })),
    auth: { type: "access_token", accessToken: { displayName: "pair", role: account.role } },
  };
}

/** The vendors → regions → computes matrix; `quotaUsed` present only for a namespace listing. */
export function renderProviders(
  hardware: readonly ComputeOption[],
  quotaUsed: ((option: ComputeOption) => number) | undefined,
): Record<string, unknown> {
  const vendors = [...new Set(hardware.map((option) => option.vendor))];
  return {
    vendors: vendors.map((vendor) => {
      const ofVendor = hardware.filter((option) => option.vendor === vendor);
      const regions = [...new Set(ofVendor.map((option) => option.region))];
      return {
        name: vendor,
        status: "available",
        regions: regions.map((region) => {
          const computes = ofVendor.filter((option) => option.region === region);
          return {
            name: region,
            label: computes[0]?.regionLabel ?? region,
            status: "available",
            computes: computes.map((option) => ({
              id: computeId(option),
              accelerator: option.accelerator,
              numAccelerators: option.numAccelerators,
              ...(option.numCpus === undefined ? {} : { numCpus: option.numCpus }),
              memoryGb: option.memoryGb,
              gpuMemoryGb: option.gpuMemoryGb,
              instanceType: option.instanceType,
              instanceSize: option.instanceSize,
              architecture: option.architecture,
              status: option.status,
              pricePerHour: option.pricePerHour,
              ...(quotaUsed
                ? { quota: { maxAccelerators: option.maxAccelerators, usedAccelerators: quotaUsed(option) } }
                : {}),
            })),
          };
        }),
      };
    }),
  };
}
