/**
 * Aligned plain-text tables for people: a header row, columns padded to their widest cell, two
 * spaces between columns, numbers right-aligned where asked, no trailing spaces. Also the few value
 * formats the tables share (durations, times, token counts, dollars), "-" for an unknown value.
 * Must not know: what the rows mean, where they came from.
 */

export type Align = "left" | "right";

export interface Column {
  readonly header: string;
  readonly align?: Align;
}

/** Lines of the table, each without a newline. With `headers: false` only the rows are shown. */
export function renderTable(
  columns: readonly Column[],
  rows: readonly (readonly string[])[],
  options: { readonly headers?: boolean } = {},
): string[] {
  const showHeaders = options.headers ?? true;
  const all = showHeaders ? [columns.map((c) => c.header), ...rows] : [...rows];
  const widths = columns.map((_, i) => Math.max(0, ...all.map((row) => [...(row[i] ?? "")].length)));
  return all.map((row) =>
    columns
      .map((column, i) => {
        const cell = row[i] ?? "";
        const pad = " ".repeat((widths[i] ?? 0) - [...cell].length);
        return column.align === "right" ? pad + cell : cell + pad;
      })
      .join("  ")
      .trimEnd(),
  );
}

export const UNKNOWN = "-";

/** `850 ms`, `1.2 s`, `2m05s`, `1h02m`. */
export function formatDurationMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return UNKNOWN;
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const totalSeconds = Math.round(ms / 1_000);
  const two = (n: number) => String(n).padStart(2, "0");
  if (totalSeconds < 3_600) return `${Math.floor(totalSeconds / 60)}m${two(totalSeconds % 60)}s`;
  return `${Math.floor(totalSeconds / 3_600)}h${two(Math.floor((totalSeconds % 3_600) / 60))}m`;
}

/** Local time: `14:03:27` on the day of `nowMs`, else `2025-06-01 14:03`. */
export function formatStartedAt(iso: string, nowMs: number): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return UNKNOWN;
  const two = (n: number) => String(n).padStart(2, "0");
  const day = (d: Date) => `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
  const time = `${two(at.getHours())}:${two(at.getMinutes())}`;
  return day(at) === day(new Date(nowMs)) ? `${time}:${two(at.getSeconds())}` : `${day(at)} ${time}`;
}

/** `12/345`, `-/8` when one side is unknown. */
export function formatTokens(tokensIn: number | null, tokensOut: number | null): string {
  return `${tokensIn ?? UNKNOWN}/${tokensOut ?? UNKNOWN}`;
}

/** `$0`, `$0.0042`, `$1.25`. */
export function formatUsd(usd: number): string {
  if (usd === 0) return "$0";
  return `$${usd.toFixed(Math.abs(usd) < 0.01 ? 4 : 2)}`;
}
