/**
 * `GET /api/jobs/{ns}/{id}/logs` as Server-Sent Events (reference §5.5 [C]): each line as
 * `data: {"data": "<line>", "timestamp": "<ISO>"}`; history first (`?tail=N` keeps the last N); while
 * the job is live the stream stays open and new lines follow as the virtual clock moves; it ends when
 * the job leaves SCHEDULING/RUNNING. (HF's 30 s `: keep-alive` comments are not sent: virtual time.)
 * Must not know: routes' auth (checked before), billing.
 */

import type { ServerResponse } from "node:http";
import { isLiveStage } from "./job-stages.js";
import type { JobRecord, JobsWorld, LogLine } from "./jobs-world.js";

const event = (line: LogLine): string =>
  `data: ${JSON.stringify({ data: line.data, timestamp: line.timestamp })}\n\n`;

export function streamLogs(
  world: JobsWorld,
  record: JobRecord,
  res: ServerResponse,
  query: URLSearchParams,
): void {
  res.statusCode = 200;
  res.setHeader("content-type", "text/event-stream");
  res.setHeader("cache-control", "no-cache");
  const tailRaw = query.get("tail");
  const tail = tailRaw !== null && /^\d{1,6}$/.test(tailRaw) ? Number(tailRaw) : undefined;
  const history =
    tail === undefined ? record.logs : record.logs.slice(Math.max(0, record.logs.length - tail));
  for (const line of history) res.write(event(line));
  if (!isLiveStage(record.stage)) {
    res.end();
    return;
  }
  const stop = world.onLog((job, line) => {
    if (job !== record) return;
    if (line === undefined) {
      stop();
      res.end();
    } else res.write(event(line));
  });
  res.once("close", () => stop());
}
