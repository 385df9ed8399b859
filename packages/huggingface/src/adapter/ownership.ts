/**
 * PAIR's marks on an endpoint it creates: the owner tag, the create's request id and the lease
 * epoch, written as endpoint tags (`pair:owner=…`, `pair:request=…`, `pair:epoch=…`) and, as a second
 * copy, as plain env vars (`PAIR_OWNER_TAG`, …), and read back from what HF echoes. Tags win; a mark
 * given twice with different values is taken as absent (an ambiguous endpoint is never adopted).
 * Must not know: HTTP, the contract's rules about what a mark allows.
 */

export interface OwnershipMarks {
  readonly ownerTag?: string;
  readonly requestId?: string;
  readonly epoch?: number;
}

const TAG_PREFIX = { ownerTag: "pair:owner=", requestId: "pair:request=", epoch: "pair:epoch=" } as const;
const ENV_NAME = { ownerTag: "PAIR_OWNER_TAG", requestId: "PAIR_REQUEST_ID", epoch: "PAIR_EPOCH" } as const;

/** The tags to add to a create body. */
export function ownershipTags(marks: Required<OwnershipMarks>): string[] {
  return [
    `${TAG_PREFIX.ownerTag}${marks.ownerTag}`,
    `${TAG_PREFIX.requestId}${marks.requestId}`,
    `${TAG_PREFIX.epoch}${marks.epoch}`,
  ];
}

/** The env vars to add to a create body (the same marks; read back when tags were replaced). */
export function ownershipEnv(marks: Required<OwnershipMarks>): Record<string, string> {
  return {
    [ENV_NAME.ownerTag]: marks.ownerTag,
    [ENV_NAME.requestId]: marks.requestId,
    [ENV_NAME.epoch]: String(marks.epoch),
  };
}

/** True for a tag PAIR writes (users' own tags are kept beside them). */
export function isOwnershipTag(tag: string): boolean {
  return Object.values(TAG_PREFIX).some((prefix) => tag.startsWith(prefix));
}

type TagValue =
  | { readonly kind: "none" }
  | { readonly kind: "one"; readonly value: string }
  | { readonly kind: "ambiguous" };

function fromTags(tags: readonly string[], prefix: string): TagValue {
  const values = new Set(tags.filter((t) => t.startsWith(prefix)).map((t) => t.slice(prefix.length)));
  if (values.size > 1) return { kind: "ambiguous" };
  const [only] = values;
  return only === undefined || only === "" ? { kind: "none" } : { kind: "one", value: only };
}

function mark(
  tags: readonly string[],
  env: Readonly<Record<string, string>>,
  key: keyof typeof TAG_PREFIX,
): string | undefined {
  const tagged = fromTags(tags, TAG_PREFIX[key]);
  if (tagged.kind === "ambiguous") return undefined;
  if (tagged.kind === "one") return tagged.value;
  const value = env[ENV_NAME[key]];
  return value === undefined || value === "" ? undefined : value;
}

/** The marks an endpoint carries; each one absent when missing, empty or ambiguous. */
export function readOwnership(
  tags: readonly string[],
  env: Readonly<Record<string, string>>,
): OwnershipMarks {
  const ownerTag = mark(tags, env, "ownerTag");
  const requestId = mark(tags, env, "requestId");
  const epochText = mark(tags, env, "epoch");
  const epoch = epochText !== undefined && /^\d{1,15}$/.test(epochText) ? Number(epochText) : undefined;
  return {
    ...(ownerTag === undefined ? {} : { ownerTag }),
    ...(requestId === undefined ? {} : { requestId }),
    ...(epoch === undefined ? {} : { epoch }),
  };
}
