/**
 * The Jobs proxy in front of each job's exposed port (`/jobs-proxy/{jobId}--{port}/…`; HF:
 * `https://{jobId}--{port}.hf.jobs`). Never public: the request needs `Authorization: Bearer <HF
 * token>` with read access to the job's namespace (reference §5.7 [D]). Refusal statuses are not
 * documented ([?]); the emulator answers 401 without a valid token, 403 for a token of another
 * namespace, 404 for an unknown job or port, 503 while the job is scheduling or loading its model,
 * and 404 once the job has ended. Then the job's engine (a vLLM-like OpenAI server) serves it.
 * Must not know: the control routes, billing, fault switches.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { mayAccess, type TokenRegistry } from "../huggingface/tokens.js";
import { sendError } from "./http-io.js";
import { isLiveStage } from "./job-stages.js";
import type { JobsWorld } from "./jobs-world.js";

export function handleJobsProxy(
  world: JobsWorld,
  tokens: TokenRegistry,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: string,
): void {
  const match = /^\/jobs-proxy\/([0-9a-f]{24})--(\d{1,5})(\/.*)?$/.exec(path);
  const record = match?.[1] === undefined ? undefined : world.byId(match[1]);
  const port = Number(match?.[2]);
  const account = tokens.fromHeaders(req.headers);
  if (!account) return sendError(res, 401, "Invalid credentials in Authorization header");
  if (!match || !record || !record.spec.exposePorts.includes(port))
    return sendError(res, 404, "Not Found: no job port at this URL");
  if (!mayAccess(account, record.namespace))
    return sendError(res, 403, `This token has no read access to namespace '${record.namespace}'`);
  if (!isLiveStage(record.stage))
    return sendError(res, 404, `Job ${record.id} is ${record.stage}: nothing listens on this port`);
  if (!record.portUp)
    return sendError(
      res,
      503,
      `503 Service Unavailable: job ${record.id} is ${record.stage}; port ${port} is not answering yet`,
    );
  req.url = (match[3] ?? "/") + query;
  record.engine.handle(req, res);
}
