/**
 * Budget windows in the sponsor's IANA time zone: a day runs from local midnight to the next local
 * midnight, a month from local midnight on the 1st to the next 1st. Computed with Intl alone, so a
 * day is 23 or 25 hours across a daylight-saving change, and a zone whose midnight is skipped starts
 * its day at the first instant that has the new date.
 * Must not know: money, budgets, the ledger's state.
 */

const MS_PER_DAY = 86_400_000;
/** Real offsets stay within ±14 h; a day's start lies within this of its UTC midnight. */
const SEARCH_SPAN_MS = 2 * MS_PER_DAY;

export interface TimeWindow {
  /** First instant of the window (epoch ms, inclusive). */
  readonly startMs: number;
  /** First instant after the window (epoch ms, exclusive). */
  readonly endMs: number;
  /** `2026-01-31` for a day, `2026-01` for a month, in the zone's calendar. */
  readonly key: string;
}

// Building a DateTimeFormat is costly; the memo holds only what the constructor would return again.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** True when the runtime knows `timeZone` as an IANA zone (or `UTC`). */
export function isTimeZone(timeZone: string): boolean {
  if (timeZone.trim() === "") return false;
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

interface LocalDateTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

function localDateTime(timeZone: string, atMs: number): LocalDateTime {
  const fields: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(atMs))
    if (part.type !== "literal") fields[part.type] = Number(part.value);
  return {
    year: fields.year ?? 1970,
    month: fields.month ?? 1,
    day: fields.day ?? 1,
    hour: fields.hour ?? 0,
    minute: fields.minute ?? 0,
    second: fields.second ?? 0,
  };
}

/** Days since 1970-01-01 of the local calendar date at `atMs`. */
function localDayNumber(timeZone: string, atMs: number): number {
  const t = localDateTime(timeZone, atMs);
  return Date.UTC(t.year, t.month - 1, t.day) / MS_PER_DAY;
}

/** Local wall time read as if it were UTC, minus the instant: the zone's offset at `atMs`. */
function offsetMs(timeZone: string, atMs: number): number {
  const t = localDateTime(timeZone, atMs);
  const wallAsUtc = Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);
  return wallAsUtc - (atMs - (((atMs % 1000) + 1000) % 1000));
}

/** The first instant whose local date is `dayNumber` (days since 1970-01-01 in the zone's calendar). */
function startOfLocalDay(timeZone: string, dayNumber: number): number {
  const utcMidnight = dayNumber * MS_PER_DAY;
  const isStart = (ms: number) =>
    localDayNumber(timeZone, ms) === dayNumber && localDayNumber(timeZone, ms - 1) < dayNumber;
  // Usual case: midnight exists; two offset corrections find it.
  const first = utcMidnight - offsetMs(timeZone, utcMidnight);
  const second = utcMidnight - offsetMs(timeZone, first);
  if (isStart(second)) return second;
  // Midnight skipped (or an odd offset): the smallest instant whose local date is at least the day.
  let lo = utcMidnight - SEARCH_SPAN_MS;
  let hi = utcMidnight + SEARCH_SPAN_MS;
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (localDayNumber(timeZone, mid) >= dayNumber) hi = mid;
    else lo = mid;
  }
  return hi;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

// The last day window asked for in each zone. A window depends only on the zone and the local date,
// so the memo returns what the search would find again; a Tick over many open episodes asks for the
// same day once per episode, and the search costs about a dozen formatter calls.
const lastDayWindow = new Map<string, TimeWindow>();

/** The local day containing `atMs`. */
export function dayWindow(timeZone: string, atMs: number): TimeWindow {
  const t = localDateTime(timeZone, atMs);
  const key = `${pad(t.year, 4)}-${pad(t.month, 2)}-${pad(t.day, 2)}`;
  const last = lastDayWindow.get(timeZone);
  if (last?.key === key) return last;
  const dayNumber = Date.UTC(t.year, t.month - 1, t.day) / MS_PER_DAY;
  const window = {
    startMs: startOfLocalDay(timeZone, dayNumber),
    endMs: startOfLocalDay(timeZone, dayNumber + 1),
    key,
  };
  lastDayWindow.set(timeZone, window);
  return window;
}

/** The local month containing `atMs`. */
export function monthWindow(timeZone: string, atMs: number): TimeWindow {
  const t = localDateTime(timeZone, atMs);
  return {
    startMs: startOfLocalDay(timeZone, Date.UTC(t.year, t.month - 1, 1) / MS_PER_DAY),
    endMs: startOfLocalDay(timeZone, Date.UTC(t.year, t.month, 1) / MS_PER_DAY),
    key: `${pad(t.year, 4)}-${pad(t.month, 2)}`,
  };
}

/** The key of the local day containing `atMs` (`2026-01-31`). */
export function dayKey(timeZone: string, atMs: number): string {
  const t = localDateTime(timeZone, atMs);
  return `${pad(t.year, 4)}-${pad(t.month, 2)}-${pad(t.day, 2)}`;
}

/** The month a day key belongs to (`2026-01-31` → `2026-01`). */
export function monthOfDayKey(key: string): string {
  return key.slice(0, 7);
}
