/**
 * A batch line run as a routed request of this node, in process: an HTTP exchange over an in-memory
 * stream pair (never a port, so nothing outside the process can use it) into the same `routed` as a
 * client's request — the same validation, routing over local engines, peers and rented nodes,
 * failover, history and metrics. The workload's requester is `batch:<id>`, and its priority batch:
 * every scheduler on the way puts it behind users' requests.
 * Must not know: batches' state (batch/).
 */

import { randomBytes } from "node:crypto";
import { createServer, request, type IncomingMessage } from "node:http";
import { duplexPair } from "node:stream";
import type { LineReply, RunLine } from "../batch/index.js";
import { isDialectRoute } from "@pair/dialects";
import type { ClientApiDeps } from "./client-api.js";
import { routed } from "./routed.js";

const BATCH_HEADER = "x-pair-batch";

/** `RunLine` over `deps`; `close()` ends the in-process server. */
export function inProcessLines(deps: ClientApiDeps): { readonly runLine: RunLine; close(): void } {
  const server = createServer((req, res) => {
    const route = req.url ?? "";
    const batchId = String(req.headers[BATCH_HEADER] ?? "");
    if (!isDialectRoute(route) || !/^batch_\w+$/.test(batchId)) {
      res.writeHead(404).end();
      return;
    }
    void routed(deps, route, req, res, {
      requester: `batch:${batchId}`,
      originNode: deps.nodeName,
      priority: "batch",
    }).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  const runLine: RunLine = (endpoint, body, batchId, signal) =>
    new Promise<LineReply>((resolve, reject) => {
      if (signal.aborted) return reject(new Error("aborted"));
      const [inside, outside] = duplexPair();
      server.emit("connection", inside);
      const bytes = Buffer.from(body);
      const req = request(
        {
          method: "POST",
          path: endpoint,
          headers: {
            host: "127.0.0.1",
            "content-type": "application/json",
            "content-length": String(bytes.length),
            [BATCH_HEADER]: batchId,
          },
          createConnection: () => outside,
          signal,
        },
        (res) => void collect(res, maxReplyBytes(deps)).then(resolve, reject),
      );
      req.on("error", reject);
      req.on("close", () => outside.destroy());
      req.end(bytes);
    });
  return { runLine, close: () => server.close() };
}

/** Replies are capped upstream (`max_upstream_body`); this is the same bound, for the line's reply. */
function maxReplyBytes(deps: ClientApiDeps): number {
  return deps.maxUpstreamBodyBytes ?? 64 * 1024 * 1024;
}

function collect(res: IncomingMessage, maxBytes: number): Promise<LineReply> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on("data", (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) res.destroy(new Error(`the reply is over ${maxBytes} bytes`));
      else chunks.push(c);
    });
    res.on("error", reject);
    res.on("end", () => {
      const retryAfter = Number(res.headers["retry-after"]);
      const body = Buffer.concat(chunks).toString("utf8");
      const servedBy = res.headers["x-pair-served-by"];
      resolve({
        ...(typeof servedBy === "string" && servedBy !== "" ? { servedBy } : {}),
        status: res.statusCode ?? 500,
        body,
        requestId: replyId(body),
        ...(Number.isFinite(retryAfter) && retryAfter >= 0 ? { retryAfterS: retryAfter } : {}),
        noRetry: res.headers["x-should-retry"] === "false",
      });
    });
  });
}

/** The reply's own id (`chatcmpl-…`, `cmpl-…`), else a fresh one: what OpenAI's `request_id` names. */
function replyId(body: string): string {
  const m = /^\s*\{[^]*?"id"\s*:\s*"([^"\\]{1,200})"/.exec(body.slice(0, 4096));
  return m?.[1] ?? `req_${randomBytes(12).toString("hex")}`;
}
