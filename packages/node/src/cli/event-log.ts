/**
 * The log of a long-running command (`pair serve`, `pair demo`): one stamped line per event on
 * stderr. The node reports every engine after every probe round; a line that repeats what was last
 * said about the same subject (the text before its first ": ") is dropped, so the log shows changes
 * (an engine going down, coming back) rather than a heartbeat. `json` (`pair serve --json`, or
 * PAIR_LOG_FORMAT=json) writes one JSON object a line instead; under journald (JOURNAL_STREAM set)
 * plain lines go unstamped, since the journal stamps each line itself.
 * Must not know: what the events are, the node.
 */

import type { CliIo } from "./cli-io.js";

export type EventLog = (line: string) => void;

export type LogFormat = "text" | "json";

/** The format the environment asks for: PAIR_LOG_FORMAT=json, else text. */
export function logFormatOf(env: Readonly<Record<string, string | undefined>>): LogFormat {
  return env["PAIR_LOG_FORMAT"]?.toLowerCase() === "json" ? "json" : "text";
}

export function eventLog(
  io: Pick<CliIo, "stderr" | "nowMs"> & { readonly env?: Readonly<Record<string, string | undefined>> },
  format: LogFormat = "text",
): EventLog {
  const lastBySubject = new Map<string, string>();
  const stamped = io.env?.["JOURNAL_STREAM"] === undefined;
  return (line) => {
    const colon = line.indexOf(": ");
    if (colon !== -1) {
      const subject = line.slice(0, colon);
      if (lastBySubject.get(subject) === line) return;
      lastBySubject.set(subject, line);
    }
    const time = new Date(io.nowMs()).toISOString();
    if (format === "json") io.stderr(`${JSON.stringify({ time, msg: line })}\n`);
    else io.stderr(stamped ? `${time} ${line}\n` : `${line}\n`);
  };
}
