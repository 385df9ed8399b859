/**
 * `pair history --since T`: an ISO date/time (`2025-06-01`, `2025-06-01T14:00`, `…Z`, `…+02:00`;
 * without a zone it is local time) or a duration back from now (`90s`, `15m`, `2h`, `1d`, `1w`,
 * combined as `1h30m`, fractions allowed: `1.5h`). The answer is an ISO instant for the admin API.
 * Must not know: HTTP, the history store.
 */

export type SinceResult =
  { readonly ok: true; readonly iso: string } | { readonly ok: false; readonly message: string };

const UNIT_MS: Readonly<Record<string, number>> = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
};

const RELATIVE = /^(?:[0-9]+(?:\.[0-9]+)?[smhdw])+$/;
const RELATIVE_PART = /([0-9]+(?:\.[0-9]+)?)([smhdw])/g;
const DATE_ONLY = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
const DATE_TIME =
  /^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:?[0-9]{2})?$/i;

/** Longest look-back accepted (ten years), so a typo does not become a far-away instant. */
const MAX_LOOKBACK_MS = 3_650 * 86_400_000;

export const SINCE_HINT =
  "expected an ISO date/time (2025-06-01, 2025-06-01T14:00, 2025-06-01T14:00:00Z) or a duration back " +
  "from now (90s, 15m, 2h, 1d, 1w, 1h30m)";

export function parseSince(text: string, nowMs: number): SinceResult {
  const trimmed = text.trim();
  if (RELATIVE.test(trimmed)) {
    let ms = 0;
    for (const [, amount, unit] of trimmed.matchAll(RELATIVE_PART))
      ms += Number(amount) * (UNIT_MS[unit ?? ""] ?? Number.NaN);
    if (!(ms >= 0 && ms <= MAX_LOOKBACK_MS)) {
      return { ok: false, message: `"${text}" reaches back more than ten years` };
    }
    return { ok: true, iso: new Date(nowMs - Math.round(ms)).toISOString() };
  }
  if (DATE_ONLY.test(trimmed) || DATE_TIME.test(trimmed)) {
    // Date-only strings are UTC to Date.parse while date-times without a zone are local: make both local.
    const normalised = DATE_ONLY.test(trimmed) ? `${trimmed}T00:00` : trimmed.replace(" ", "T");
    const ms = Date.parse(normalised);
    if (Number.isNaN(ms) || !isCalendarDate(trimmed))
      return { ok: false, message: `"${text}" is not a valid date/time; ${SINCE_HINT}` };
    return { ok: true, iso: new Date(ms).toISOString() };
  }
  return { ok: false, message: `"${text}": ${SINCE_HINT}` };
}

/** `2025-02-30` is not a day (Date.parse would roll it over to March). */
function isCalendarDate(text: string): boolean {
  const year = Number(text.slice(0, 4));
  const month = Number(text.slice(5, 7));
  const day = Number(text.slice(8, 10));
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth;
}
