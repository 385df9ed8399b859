/**
 * The CLI's side of the admin API (`/pair/v1/…` on the client port): which node to ask (the
 * config's `node.listen`; a wildcard address is asked on loopback), the bearer token from
 * `<data_dir>/admin.token`, one bounded GET (or POST with a JSON body), and a failure message for
 * each way it can go wrong (no node answers, no token, a token of another node, something that is
 * not PAIR on the port).
 * Must not know: what the routes return, how it is shown.
 */

import { HOLDING_RUNTIME } from "@pair/cluster";
import { readFile } from "node:fs/promises";
import { request } from "node:http";
import { isIPv6 } from "node:net";
import type { LoadedConfig } from "../config/index.js";
import { adminTokenPath } from "../auth/admin-token.js";
import { CliFailure } from "./cli-errors.js";

/** Longest wait for a connection and a full answer from the local node. */
export const ADMIN_TIMEOUT_MS = 5_000;

export interface AdminTarget {
  /** Host to connect to (brackets stripped); `0.0.0.0` / `::` become loopback. */
  readonly host: string;
  readonly port: number;
  /** As shown in messages: `127.0.0.1:11434`, `[::1]:11434`. */
  readonly address: string;
  readonly tokenPath: string;
  /** Where the address and data dir came from, for messages (undefined: built-in defaults). */
  readonly configFile: string | undefined;
}

export function adminTarget(loaded: LoadedConfig): AdminTarget {
  const { host: listenHost, port } = loaded.config.node.listen;
  const host = listenHost === "0.0.0.0" ? "127.0.0.1" : listenHost === "::" ? "::1" : listenHost;
  return {
    host,
    port,
    address: isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`,
    tokenPath: adminTokenPath(loaded.config.node.dataDir),
    configFile: loaded.found ? loaded.file.path : undefined,
  };
}

function fromConfig(target: AdminTarget): string {
  return target.configFile === undefined
    ? "the address is the default node.listen; pass the node's config with --config FILE if it listens elsewhere"
    : `the address is node.listen in ${target.configFile}`;
}

function notRunning(target: AdminTarget, why: string): CliFailure {
  return new CliFailure(
    `no PAIR node answers on ${target.address} — start one with \`pair serve\` (${why}; ${fromConfig(target)})`,
  );
}

interface RawAnswer {
  readonly status: number;
  readonly body: string;
}

type Outcome =
  { readonly ok: true; readonly answer: RawAnswer } | { readonly ok: false; readonly why: string };

function get(
  target: AdminTarget,
  path: string,
  token: string | undefined,
  post?: AdminPost,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const timeoutMs = post?.timeoutMs ?? ADMIN_TIMEOUT_MS;
    const req = request({
      host: target.host,
      port: target.port,
      path,
      method: post === undefined ? "GET" : "POST",
      agent: false,
      headers: {
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        ...(post === undefined ? {} : { "content-type": "application/json" }),
      },
    });
    const deadline = HOLDING_RUNTIME.timers.after(
      () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    req.on("error", (error: NodeJS.ErrnoException) => {
      deadline.cancel();
      resolve({ ok: false, why: error.code === "ECONNREFUSED" ? "connection refused" : error.message });
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        deadline.cancel();
        resolve({
          ok: true,
          answer: { status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") },
        });
      });
      res.on("error", () => undefined); // req's "error" reports it
    });
    req.end(post === undefined ? undefined : JSON.stringify(post.body));
  });
}

async function readToken(target: AdminTarget): Promise<string | { readonly missing: true } | CliFailure> {
  try {
    const token = (await readFile(target.tokenPath, "utf8")).trim();
    if (token !== "") return token;
    return new CliFailure(
      `the admin token file ${target.tokenPath} is empty — delete it and restart \`pair serve\`, which writes a new one`,
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { missing: true };
    return new CliFailure(
      `cannot read the admin token ${target.tokenPath} (${code ?? String(error)}) — run pair as the user that runs the node`,
    );
  }
}

/** An admin API answer that is JSON, whatever its status (errors carry `{"error": {code, message}}`). */
export interface AdminAnswer {
  readonly status: number;
  readonly json: unknown;
}

/** A JSON body to POST, and how long to wait for the answer. */
export interface AdminPost {
  readonly body: unknown;
  readonly timeoutMs: number;
}

/**
 * Call an admin route (GET, or POST with `post`) and parse its JSON, whatever the status.
 * @throws CliFailure when no PAIR node answers, the token is missing or refused, or the answer is not JSON
 */
export async function adminRequest(
  target: AdminTarget,
  path: string,
  post?: AdminPost,
): Promise<AdminAnswer> {
  const token = await readToken(target);
  if (token instanceof CliFailure) throw token;
  if (typeof token !== "string") {
    // Say "not running" when nothing answers: starting the node also creates the token.
    const probe = await get(target, "/", undefined);
    if (!probe.ok) throw notRunning(target, probe.why);
    throw new CliFailure(
      `no admin token at ${target.tokenPath} — the node on ${target.address} keeps its token in its own data_dir; ` +
        `pass that node's config with --config FILE (or $PAIR_CONFIG) so pair reads the same data_dir`,
    );
  }
  const outcome = await get(target, path, token, post);
  if (!outcome.ok) throw notRunning(target, outcome.why);
  const { status, body } = outcome.answer;
  if (status === 401) {
    throw new CliFailure(
      `the node on ${target.address} refused the admin token from ${target.tokenPath} — it runs with another data_dir; ` +
        `pass that node's config with --config FILE`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  if (json === undefined) throw notPair(target, status, path);
  return { status, json };
}

/**
 * GET an admin route and parse its JSON.
 * @throws CliFailure naming what failed and what to do
 */
export async function adminGet(target: AdminTarget, path: string): Promise<unknown> {
  const { status, json } = await adminRequest(target, path);
  if (status === 404) throw notPair(target, status, path);
  if (status !== 200) {
    throw new CliFailure(
      `the node on ${target.address} answered HTTP ${status} for ${path}: ${errorText(json)}`,
    );
  }
  return json;
}

function notPair(target: AdminTarget, status: number, path: string): CliFailure {
  return new CliFailure(
    `something answers on ${target.address}, but it is not a PAIR node (HTTP ${status} for ${path}) — if it is ` +
      `Ollama, move it with OLLAMA_HOST=127.0.0.1:11435 ollama serve and start \`pair serve\``,
  );
}

function errorText(json: unknown): string {
  const error = (json as { error?: unknown } | null)?.error;
  const message = (error as { message?: unknown } | null | undefined)?.message;
  return typeof message === "string" ? message : typeof error === "string" ? error : JSON.stringify(json);
}
