/**
 * The log of a long-running command (`pair serve`, `pair demo`): one stamped line per event on
 * stderr. The node reports every engine after every probe round; a line that repeats what was last
 * said about the same subject (the text before its first ": ") is dropped, so the log shows changes
 * (an engine going down, coming back) rather than a heartbeat.
 * Must not know: what the events are, the node.
 */

import type { CliIo } from "./cli-io.js";

export type EventLog = (line: string) => void;

export function eventLog(io: Pick<CliIo, "stderr" | "nowMs">): EventLog {
  const lastBySubject = new Map<string, string>();
  return (line) => {
    const colon = line.indexOf(": ");
    if (colon !== -1) {
      const subject = line.slice(0, colon);
      if (lastBySubject.get(subject) === line) return;
      lastBySubject.set(subject, line);
    }
    io.stderr(`${new Date(io.nowMs()).toISOString()} ${line}\n`);
  };
}
