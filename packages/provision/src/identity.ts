/**
 * Identity of a billed resource. A name is not an identity: a provider may give the same name to a
 * new resource after the old one is gone, so the provider-assigned incarnation is part of the key.
 * Must not know: how a provider spells its ids (adapters map them to these fields).
 */

export interface ResourceKey {
  /** Provider id as the adapter names it: `runpod`, `huggingface-endpoint`, `fake`, … */
  readonly provider: string;
  /** The account (namespace, team, API key owner) the resource bills to. */
  readonly account: string;
  /** The name we gave the resource. Not unique over time. */
  readonly name: string;
  /** Assigned by the provider at creation (Runpod pod id, Hugging Face endpoint creation id, …). */
  readonly incarnation: string;
}

// RFC 3339 date-time: providers write one instant with 0 to 9 fraction digits, `Z` or `+00:00`.
const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * The canonical spelling of an incarnation: a timestamp (Hugging Face's `status.createdAt`) becomes
 * ISO-8601 UTC at millisecond precision (extra digits truncated, as a millisecond writer does), so
 * the same instant is one incarnation however it was written; any other id is kept verbatim.
 */
export function canonicalIncarnation(incarnation: string): string {
  const parts = RFC3339.exec(incarnation);
  if (parts === null) return incarnation;
  const [, date, time, fraction = "", offset = "Z"] = parts;
  const ms = (fraction + "000").slice(0, 3);
  const zone = offset.toUpperCase() === "Z" || offset === "-00:00" ? "Z" : offset;
  const at = Date.parse(`${date}T${time}.${ms}${zone}`);
  return Number.isFinite(at) ? new Date(at).toISOString() : incarnation;
}

/** Same incarnation, compared in canonical form (records stored before normalisation included). */
export function sameIncarnation(a: string, b: string): boolean {
  return a === b || canonicalIncarnation(a) === canonicalIncarnation(b);
}

/** True only when all four parts are equal. Same name of another incarnation is another resource. */
export function sameResource(a: ResourceKey, b: ResourceKey): boolean {
  return (
    a.provider === b.provider &&
    a.account === b.account &&
    a.name === b.name &&
    sameIncarnation(a.incarnation, b.incarnation)
  );
}

/** Equal strings exactly when `sameResource` holds (JSON keeps the parts apart whatever they contain). */
export function resourceKeyString(key: ResourceKey): string {
  return JSON.stringify([key.provider, key.account, key.name, canonicalIncarnation(key.incarnation)]);
}

/** A stable, human-readable form: `provider:account/name#incarnation`. */
export function formatKey(key: ResourceKey): string {
  return `${key.provider}:${key.account}/${key.name}#${key.incarnation}`;
}

/** Where a resource lives before the provider has given it an incarnation. */
export interface ResourceSlot {
  readonly provider: string;
  readonly account: string;
  readonly name: string;
}

export function slotOf(key: ResourceKey | ResourceSlot): ResourceSlot {
  return { provider: key.provider, account: key.account, name: key.name };
}

export function sameSlot(a: ResourceSlot, b: ResourceSlot): boolean {
  return a.provider === b.provider && a.account === b.account && a.name === b.name;
}
