/**
 * PAIR's marks on a job: the job name (HF's `name` label), owner tag, request id, lease epoch and
 * window, as labels (`pair-owner`, `pair-request`, `pair-epoch`, `pair-window-s`) and, as a second
 * copy, as plain env vars (`PAIR_OWNER_TAG`, `PAIR_REQUEST_ID`, `PAIR_EPOCH`) — HF labels allow only
 * 100 characters of `[A-Za-z0-9._-]`, so a mark that does not fit is carried by env alone. Read back:
 * the label wins, env is the fallback; a label and env that disagree make the mark absent.
 * Must not know: HTTP, what the contract does with a mark.
 */

import type { OwnershipMarks } from "../adapter/ownership.js";

export const LABEL = {
  name: "name",
  ownerTag: "pair-owner",
  requestId: "pair-request",
  epoch: "pair-epoch",
  windowS: "pair-window-s",
} as const;
const ENV = { ownerTag: "PAIR_OWNER_TAG", requestId: "PAIR_REQUEST_ID", epoch: "PAIR_EPOCH" } as const;

/** Whether a value may be an HF job label value. */
export function fitsLabel(value: string): boolean {
  return /^[A-Za-z0-9._-]{1,100}$/.test(value);
}

export interface JobMarks extends Required<OwnershipMarks> {
  readonly name: string;
  readonly windowS: number;
}

export function markLabels(marks: JobMarks): Record<string, string> {
  const labels: Record<string, string> = {
    [LABEL.name]: marks.name,
    [LABEL.epoch]: String(marks.epoch),
    [LABEL.windowS]: String(marks.windowS),
  };
  if (fitsLabel(marks.ownerTag)) labels[LABEL.ownerTag] = marks.ownerTag;
  if (fitsLabel(marks.requestId)) labels[LABEL.requestId] = marks.requestId;
  return labels;
}

export function markEnv(marks: JobMarks): Record<string, string> {
  return {
    [ENV.ownerTag]: marks.ownerTag,
    [ENV.requestId]: marks.requestId,
    [ENV.epoch]: String(marks.epoch),
  };
}

function mark(
  labels: Readonly<Record<string, string>>,
  env: Readonly<Record<string, string>>,
  key: keyof typeof ENV,
): string | undefined {
  const label = labels[LABEL[key]];
  const copy = env[ENV[key]];
  if (label !== undefined && label !== "" && copy !== undefined && copy !== "" && label !== copy)
    return undefined;
  const value = label !== undefined && label !== "" ? label : copy;
  return value === undefined || value === "" ? undefined : value;
}

export function readJobMarks(
  labels: Readonly<Record<string, string>>,
  env: Readonly<Record<string, string>>,
): OwnershipMarks {
  const ownerTag = mark(labels, env, "ownerTag");
  const requestId = mark(labels, env, "requestId");
  const epochText = mark(labels, env, "epoch");
  const epoch = epochText !== undefined && /^\d{1,15}$/.test(epochText) ? Number(epochText) : undefined;
  return {
    ...(ownerTag === undefined ? {} : { ownerTag }),
    ...(requestId === undefined ? {} : { requestId }),
    ...(epoch === undefined ? {} : { epoch }),
  };
}
