/**
 * A batch's `--rent auto` as it reaches `POST /v1/batches`: in OpenAI's own `metadata` (string
 * values, so the official clients pass it unchanged) — `pair_rent: "auto"`, `pair_deadline` (a
 * duration within the completion window; default the window), `pair_budget_usd` (the most its
 * rental may bill), `pair_credential` (the Hugging Face token's reference) and `pair_model` (the
 * model to rent for; default the file's one model). Without `pair_rent`, a batch never rents.
 * Must not know: HTTP, how a rental is made.
 */

import { windowMs, type InputLine } from "./batch-input.js";

export interface RentOptions {
  readonly model: string;
  readonly deadlineS: number;
  readonly budgetUsd: number | null;
  readonly credential: string | null;
}

export type RentRead =
  | { readonly ok: true; readonly rent: RentOptions | undefined }
  | { readonly ok: false; readonly message: string };

export function readRentOptions(
  metadata: Readonly<Record<string, string>> | null,
  windowS: number,
  lines: readonly InputLine[],
): RentRead {
  const m = metadata ?? {};
  const rent = m["pair_rent"];
  const others = ["pair_deadline", "pair_budget_usd", "pair_credential", "pair_model"].filter(
    (k) => m[k] !== undefined,
  );
  if (rent === undefined) {
    if (others.length === 0) return { ok: true, rent: undefined };
    return { ok: false, message: `metadata: ${others.join(", ")} need pair_rent: "auto"` };
  }
  if (rent !== "auto") return { ok: false, message: 'metadata.pair_rent: the one value is "auto"' };
  const deadline = m["pair_deadline"];
  const deadlineMs = deadline === undefined ? windowS * 1000 : windowMs(deadline);
  if (deadlineMs === undefined || deadlineMs > windowS * 1000)
    return {
      ok: false,
      message: "metadata.pair_deadline: a duration such as 8h or 90m, within the completion window",
    };
  const budgetText = m["pair_budget_usd"];
  const budgetUsd = budgetText === undefined ? null : Number(budgetText);
  if (budgetUsd !== null && !(Number.isFinite(budgetUsd) && budgetUsd > 0))
    return { ok: false, message: 'metadata.pair_budget_usd: US dollars greater than 0, e.g. "5"' };
  const models = [...new Set(lines.filter((l) => l.result === undefined).map((l) => l.model))];
  const model = m["pair_model"] ?? models[0];
  if (models.length > 1 || model === undefined || (models[0] !== undefined && models[0] !== model))
    return {
      ok: false,
      message:
        `metadata.pair_rent: a rental serves one model; the file asks for ${models.join(", ") || "none"}` +
        (m["pair_model"] === undefined ? "" : ` (pair_model: ${m["pair_model"]})`),
    };
  return {
    ok: true,
    rent: { model, deadlineS: deadlineMs / 1000, budgetUsd, credential: m["pair_credential"] ?? null },
  };
}
