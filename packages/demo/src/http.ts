/**
 * How the demo's tour talks to its nodes — as a user's curl and `pair` commands would: a chat request
 * to a node's client port (streamed or not) and an admin call with the node's bearer token. Answers
 * are reduced to what the tour prints: status, the serving node, the error's code and message.
 * Must not know: the tour's steps, how the nodes were started.
 */

export interface ChatAnswer {
  readonly status: number;
  /** `x-pair-served-by`: the node (or rented node) that served it. */
  readonly servedBy: string | undefined;
  /** SSE `data:` events received (streamed requests). */
  readonly events: number;
  readonly text: string;
  readonly errorCode: string | undefined;
  readonly errorMessage: string | undefined;
}

export interface AdminAnswer {
  readonly status: number;
  readonly json: unknown;
}

export interface AdminTarget {
  readonly url: string;
  readonly adminToken: string;
}

export async function chat(url: string, model: string, stream = false): Promise<ChatAnswer> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, stream, messages: [{ role: "user", content: "Why is the sky blue?" }] }),
  });
  const text = await res.text();
  let error: { code?: unknown; message?: unknown } | undefined;
  if (res.status >= 400) {
    try {
      error = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown } }).error;
    } catch {
      error = undefined;
    }
  }
  return {
    status: res.status,
    servedBy: res.headers.get("x-pair-served-by") ?? undefined,
    events: text.split("\n").filter((l) => l.startsWith("data: ") && l !== "data: [DONE]").length,
    text,
    errorCode: typeof error?.code === "string" ? error.code : undefined,
    errorMessage: typeof error?.message === "string" ? error.message : undefined,
  };
}

/** An admin route of `node` (POST when `body` is given). */
export async function adminCall(node: AdminTarget, path: string, body?: unknown): Promise<AdminAnswer> {
  const res = await fetch(`${node.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${node.adminToken}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json: unknown = await res.json();
  return { status: res.status, json };
}

/** The `error.message` of an admin answer ("" when it is not an error). */
export function adminErrorMessage(answer: AdminAnswer): string {
  const message = (answer.json as { error?: { message?: unknown } } | null)?.error?.message;
  return typeof message === "string" ? message : "";
}

/** The `error.code` of an admin answer, if it is an error. */
export function adminErrorCode(answer: AdminAnswer): string | undefined {
  const code = (answer.json as { error?: { code?: unknown } } | null)?.error?.code;
  return typeof code === "string" ? code : undefined;
}
