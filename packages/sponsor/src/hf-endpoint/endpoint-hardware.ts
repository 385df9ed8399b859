/**
 * The hardware a managed endpoint runs on, to price it: the endpoint's own, or — when Hugging Face
 * says it does not exist (a create PAIR declared may never have happened, or not yet) — the hardware
 * PAIR asked for in its last declared create, from SQLite. Pricing must not depend on the endpoint
 * existing, or reconciliation could never run to settle that create's obligation.
 * Must not know: the ledger, the node's lifecycle.
 */

import { HuggingFaceApiError, type EndpointsTransport, type HfComputeOffer } from "@pair/huggingface";
import type { HostingState } from "@pair/provision";

export interface HardwareShape {
  readonly instanceType: string | undefined;
  readonly instanceSize: string | undefined;
  readonly vendor: string | undefined;
  readonly region: string | undefined;
}

export async function hardwareOf(
  transport: Pick<EndpointsTransport, "getEndpoint">,
  endpoint: { readonly namespace: string; readonly name: string },
  hosting: HostingState,
): Promise<HardwareShape> {
  try {
    const e = await transport.getEndpoint(endpoint.namespace, endpoint.name);
    return { instanceType: e.instanceType, instanceSize: e.instanceSize, vendor: e.vendor, region: e.region };
  } catch (cause) {
    const declared = Object.values(hosting.deployments)
      .filter((d) => d.origin === "create" && d.spec !== undefined)
      .sort((a, b) => b.declaredAtMs - a.declaredAtMs)[0]?.spec;
    if (!(cause instanceof HuggingFaceApiError) || cause.status !== 404 || declared === undefined)
      throw cause;
    const setting = (key: string) => {
      const value = declared.settings?.[key];
      return typeof value === "string" ? value : undefined;
    };
    return {
      instanceType: declared.hardware,
      instanceSize: setting("instanceSize"),
      vendor: setting("vendor"),
      region: declared.region,
    };
  }
}

/** The offer priced for this hardware: same vendor and region first, else the same instance anywhere. */
export function offerFor(
  offers: readonly HfComputeOffer[],
  shape: HardwareShape,
): HfComputeOffer | undefined {
  return (
    offers.find(
      (o) =>
        o.instanceType === shape.instanceType &&
        o.instanceSize === shape.instanceSize &&
        o.vendor === shape.vendor &&
        o.region === shape.region,
    ) ?? offers.find((o) => o.instanceType === shape.instanceType && o.instanceSize === shape.instanceSize)
  );
}
