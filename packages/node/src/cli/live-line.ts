/**
 * The progress of a long wait (`pair rented create`, `pair rented resume`) as people and logs want
 * it: on a terminal one line rewritten at every update (each second) and kept when the state
 * changes; elsewhere (a pipe, a file, CI) a line when the state changes and one every 30 s between.
 * Must not know: what is waited for, how it is asked.
 */

import type { CliIo } from "./cli-io.js";

/** Off a terminal, the longest gap between two lines while the state stays the same. */
export const HEARTBEAT_MS = 30_000;

/** Clears the terminal line the cursor is on and goes back to its start (ANSI). */
const CLEAR_LINE = "\r\u001b[K";

export interface LiveLine {
  /** Show `text`; `state` decides when a line is kept (a terminal) or printed at once (elsewhere). */
  update(state: string, text: string): void;
  /** End the wait: `text` as the last line (a terminal's live line is replaced by it). */
  finish(text?: string): void;
}

export function liveLine(io: Pick<CliIo, "stdout" | "nowMs" | "stdoutIsTerminal">): LiveLine {
  const terminal = io.stdoutIsTerminal === true;
  let state: string | undefined;
  let open = false; // a terminal line written without its newline yet
  let printedAtMs = 0;
  return {
    update(next, text) {
      const changed = next !== state;
      if (terminal) {
        // A new state keeps the old line on screen, so the states seen stay readable.
        io.stdout(`${open && changed ? "\n" : CLEAR_LINE}${text}`);
        open = true;
      } else if (changed || io.nowMs() - printedAtMs >= HEARTBEAT_MS) {
        io.stdout(`${text}\n`);
        printedAtMs = io.nowMs();
      }
      state = next;
    },
    finish(text) {
      if (terminal && open) io.stdout(text === undefined ? "\n" : `${CLEAR_LINE}${text}\n`);
      else if (text !== undefined) io.stdout(`${text}\n`);
      open = false;
    },
  };
}
