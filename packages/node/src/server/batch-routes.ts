/**
 * OpenAI's Files and Batch APIs on the client port: `POST /v1/files` (multipart, `purpose=batch`),
 * `GET /v1/files[/{id}[/content]]`, `DELETE /v1/files/{id}`, `POST /v1/batches`, `GET /v1/batches[/{id}]`,
 * `POST /v1/batches/{id}/cancel` — the objects and errors as the official `openai` client reads them.
 * A file past `maxFileBytes` is refused with 413 `file_too_large` before it is kept. Creating a batch
 * reads and checks its input file at once (batch-input.ts): a file unusable as a whole makes a
 * `failed` batch with its `errors`, as OpenAI's does.
 * Must not know: how lines run (batch-runner.ts), where files are kept.
 */

import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  batchJson,
  fileJson,
  listJson,
  type BatchEvent,
  type RecordEvent,
  type BatchRunner,
  type BatchStore,
  type StoredBatch,
} from "../batch/index.js";
import { readBody } from "../http/request-body.js";
import { readBatchRequest, storeBatch, type BatchRequest } from "./batch-create.js";
import { sendJson } from "./model-routes.js";

export interface BatchRouteDeps {
  readonly store: BatchStore;
  readonly runner: BatchRunner;
  readonly wallMs: () => number;
  /** Largest file `POST /v1/files` keeps. */
  readonly maxFileBytes: number;
  readonly bodyIdleTimeoutMs?: number;
  /** Batches' lifecycle events and `--rent auto` (absent: a batch asking to rent is refused). */
  readonly lifecycle?: BatchLifecycle;
}

export interface BatchLifecycle {
  readonly record: RecordEvent;
  readonly events: (batchId: string) => readonly BatchEvent[];
  /** Whether this node can rent for a batch (it sponsors; Hugging Face Jobs are set up). */
  readonly canRent: boolean;
  /** A batch to rent for was created: plan it now. */
  readonly wake: () => void;
}

/** Whether `path` is one of these routes (any method). */
export function isBatchPath(path: string): boolean {
  return (
    path === "/v1/files" ||
    path.startsWith("/v1/files/") ||
    path === "/v1/batches" ||
    path.startsWith("/v1/batches/")
  );
}

export async function serveBatchRoute(
  deps: BatchRouteDeps,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  url: URL,
  requester: string,
): Promise<void> {
  const method = req.method ?? "GET";
  const parts = path.split("/").slice(2); // ["files", id?, "content"?] or ["batches", id?, "cancel"?]
  const [kind, id, action] = parts;
  if (kind === "files") {
    if (id === undefined) {
      if (method === "POST") return uploadFile(deps, req, res);
      if (method === "GET") return listFiles(deps, res, url);
    } else if (action === undefined) {
      if (method === "GET") return withFile(deps, res, id, (f) => sendJson(res, 200, fileJson(f)));
      if (method === "DELETE") return deleteFile(deps, res, id);
    } else if (action === "content" && method === "GET") {
      return withFile(deps, res, id, (f) => {
        const bytes = deps.store.fileContent(f.id);
        res.writeHead(200, {
          "content-type": "application/octet-stream",
          "content-length": String(bytes.length),
          "content-disposition": `attachment; filename="${f.filename.replace(/[^\w.-]/g, "_")}"`,
        });
        res.end(bytes);
      });
    }
  } else if (kind === "batches") {
    if (id === undefined) {
      if (method === "POST") return createBatch(deps, req, res, requester);
      if (method === "GET") return listBatches(deps, res, url);
    } else if (action === undefined && method === "GET") {
      return withBatch(deps, res, id, (b) => sendJson(res, 200, batchOut(deps, b)));
    } else if (action === "cancel" && method === "POST") {
      return withBatch(deps, res, id, (b) =>
        sendJson(res, 200, batchOut(deps, deps.runner.cancel(b.id) ?? b)),
      );
    }
  }
  fail(res, 404, "invalid_request", `no route ${method} ${path}`);
}

/** The dashboard's batches under the admin API (session or admin token). */
export const ADMIN_BATCHES_PATH = "/pair/v1/batches";

export function isAdminBatchPath(path: string): boolean {
  return path === ADMIN_BATCHES_PATH || path.startsWith(`${ADMIN_BATCHES_PATH}/`);
}

/**
 * `GET /pair/v1/batches`, `GET /pair/v1/batches/{id}` and `POST /pair/v1/batches/{id}/cancel`: the
 * same objects as /v1/batches, for the dashboard. No upload and no create here: a page never starts
 * a batch, it only watches and cancels.
 */
export function serveAdminBatches(
  deps: BatchRouteDeps,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  url: URL,
): Promise<void> {
  const method = req.method ?? "GET";
  const [id, action, ...rest] = path.slice(ADMIN_BATCHES_PATH.length + 1).split("/");
  // No body is read: drain whatever was sent so the connection stays usable.
  req.resume();
  const read = method === "GET" && action === undefined;
  const cancel = method === "POST" && id !== undefined && id !== "" && action === "cancel";
  if (rest.length > 0 || !(read || cancel)) {
    fail(
      res,
      405,
      "invalid_request",
      `use GET ${ADMIN_BATCHES_PATH}[/{id}] or POST ${ADMIN_BATCHES_PATH}/{id}/cancel`,
    );
    return Promise.resolve();
  }
  return serveBatchRoute(deps, req, res, path.slice("/pair".length), url, "dashboard");
}

async function uploadFile(deps: BatchRouteDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const type = req.headers["content-type"] ?? "";
  if (!/^multipart\/form-data/i.test(type))
    return fail(
      res,
      400,
      "invalid_request",
      "upload a file as multipart/form-data with fields `purpose` and `file`",
    );
  // The multipart framing around the file: a few hundred bytes, given a little room.
  const body = await readBody(req, deps.maxFileBytes + 64 * 1024, deps.bodyIdleTimeoutMs);
  if (!body.ok) {
    if (body.status === 413)
      return fail(
        res,
        413,
        "file_too_large",
        `the file is over this node's limit of ${deps.maxFileBytes} bytes`,
      );
    return fail(res, body.status, body.code, body.message);
  }
  let form: FormData;
  try {
    form = await new Response(body.bytes, { headers: { "content-type": type } }).formData();
  } catch (cause) {
    return fail(
      res,
      400,
      "invalid_request",
      `the multipart body cannot be read: ${(cause as Error).message}`,
    );
  }
  const purpose = form.get("purpose");
  const file = form.get("file");
  if (purpose !== "batch")
    return fail(
      res,
      400,
      "invalid_request",
      'purpose must be "batch" (the only purpose PAIR keeps files for)',
      "purpose",
    );
  if (file === null || typeof file === "string")
    return fail(res, 400, "invalid_request", "the form has no `file` field holding a file", "file");
  const bytes = Buffer.from(await file.arrayBuffer());
  if (bytes.length > deps.maxFileBytes)
    return fail(
      res,
      413,
      "file_too_large",
      `the file is over this node's limit of ${deps.maxFileBytes} bytes`,
    );
  const stored = {
    id: `file-${randomBytes(12).toString("hex")}`,
    purpose: "batch" as const,
    filename: (file.name || "input.jsonl").slice(0, 255),
    bytes: bytes.length,
    createdAtS: Math.floor(deps.wallMs() / 1000),
  };
  deps.store.putFile(stored, bytes);
  sendJson(res, 200, fileJson(stored));
}

function listFiles(deps: BatchRouteDeps, res: ServerResponse, url: URL): void {
  const purpose = url.searchParams.get("purpose") ?? undefined;
  const files = deps.store.files(purpose).map(fileJson);
  sendJson(res, 200, { ...listJson(files, false) });
}

function deleteFile(deps: BatchRouteDeps, res: ServerResponse, id: string): void {
  if (!deps.store.deleteFile(id)) return fail(res, 404, "file_not_found", `no file ${id}`);
  sendJson(res, 200, { id, object: "file", deleted: true });
}

async function createBatch(
  deps: BatchRouteDeps,
  req: IncomingMessage,
  res: ServerResponse,
  requester: string,
): Promise<void> {
  const body = await readBody(req, 64 * 1024, deps.bodyIdleTimeoutMs);
  if (!body.ok) return fail(res, body.status, body.code, body.message);
  const request = readBatchRequest(deps.store, body.bytes, deps.lifecycle?.canRent === true);
  if (!request.ok) return fail(res, request.status, request.code, request.message, request.param);
  const nowS = Math.floor(deps.wallMs() / 1000);
  const batch = storeBatch(deps.store, request, requester, nowS);
  startBatch(deps, batch.id, request, nowS);
  sendJson(res, 200, batchOut(deps, deps.store.batch(batch.id) ?? batch));
}

/** Records the batch's first event and wakes its runner, and its rental planning if it rents. */
function startBatch(deps: BatchRouteDeps, batchId: string, request: BatchRequest, nowS: number): void {
  const { input, rent: r } = request;
  const rentWords =
    r === undefined
      ? "never rents"
      : `--rent auto by ${new Date((nowS + r.deadlineS) * 1000).toISOString()}` +
        (r.budgetUsd === null ? "" : ` for at most $${r.budgetUsd}`);
  deps.lifecycle?.record(
    batchId,
    input.ok ? "submitted" : "failed",
    `${input.ok ? input.lines.length : 0} line(s) for ${request.endpoint}, ${rentWords}`,
    deps.wallMs(),
  );
  deps.runner.wake(batchId);
  if (r !== undefined) deps.lifecycle?.wake();
}

function listBatches(deps: BatchRouteDeps, res: ServerResponse, url: URL): void {
  const limit = Math.min(100, Math.max(1, Number(url.searchParams.get("limit") ?? 20) || 20));
  const after = url.searchParams.get("after") ?? undefined;
  const page = deps.store.batches(limit + 1, after);
  sendJson(
    res,
    200,
    listJson(
      page.slice(0, limit).map((b) => batchOut(deps, b)),
      page.length > limit,
    ),
  );
}

function batchOut(deps: BatchRouteDeps, b: StoredBatch): Record<string, unknown> {
  return batchJson(b, deps.store.counts(b.id), {
    inFlight: deps.runner.inFlight(b.id),
    byNode: deps.store.servedByNode(b.id),
    rent: deps.store.rentals.get(b.id),
    events: deps.lifecycle?.events(b.id) ?? [],
  });
}

function withFile(
  deps: BatchRouteDeps,
  res: ServerResponse,
  id: string,
  then: (f: NonNullable<ReturnType<BatchStore["file"]>>) => void,
): void {
  const f = deps.store.file(id);
  if (f === undefined) return fail(res, 404, "file_not_found", `no file ${id}`);
  then(f);
}

function withBatch(
  deps: BatchRouteDeps,
  res: ServerResponse,
  id: string,
  then: (b: StoredBatch) => void,
): void {
  const b = deps.store.batch(id);
  if (b === undefined)
    return fail(res, 404, "batch_not_found", `no batch ${id}; \`pair batch list\` lists them`);
  then(b);
}

function fail(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  param: string | null = null,
): void {
  sendJson(res, status, { error: { message, type: "invalid_request_error", param, code } });
}
