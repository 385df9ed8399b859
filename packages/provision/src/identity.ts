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

/** True only when all four parts are equal. Same name of another incarnation is another resource. */
export function sameResource(a: ResourceKey, b: ResourceKey): boolean {
  return (
    a.provider === b.provider &&
    a.account === b.account &&
    a.name === b.name &&
    a.incarnation === b.incarnation
  );
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
