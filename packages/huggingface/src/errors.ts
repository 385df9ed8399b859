/**
 * The one error the Hugging Face transport throws: which operation failed, a stable `kind`, the
 * HTTP status and HF's own message when there was an answer, the request id, the server's
 * retry-after, and whether trying again can help. `uncertain` means a non-idempotent call (create,
 * update, catalog deploy) may or may not have taken effect: resolve it by listing, never by resending.
 * Must not know: undici, retries (they decide with it), the token (never part of a message).
 */

export type HfErrorKind =
  /** 401: the token is invalid, or lacks access to the namespace. Re-set the credential. */
  | "rejected_credential"
  /** 403: the token is valid but may not do this (e.g. a read token, or a fine-grained policy). */
  | "forbidden"
  | "not_found"
  /** 409: e.g. the endpoint name is taken. */
  | "conflict"
  /** 400/422: HF refused the request (message says why, e.g. "already running", quota). */
  | "invalid_request"
  /** 429, after any allowed retries. `retryAfterMs` says when to come back. */
  | "rate_limited"
  /** 5xx from an idempotent call, after the allowed retries. */
  | "server"
  /** A non-idempotent call sent but not answered (dropped, timed out, or 5xx): list to find out. */
  | "uncertain"
  /** The request never reached HF (refused, DNS, connect timeout), or an idempotent call's answer was lost. */
  | "unreachable"
  /** The server's certificate did not verify against the trusted CAs. */
  | "certificate"
  /** HF answered something this client cannot read (not JSON, a required field missing). */
  | "protocol";

export class HuggingFaceApiError extends Error {
  readonly code = "huggingface_api_error";
  readonly kind: HfErrorKind;
  readonly operation: string;
  readonly status: number | undefined;
  /** HF's own message from the error body (`error`, `message`, `error_description`, `errors[].message`). */
  readonly providerMessage: string | undefined;
  readonly requestId: string | undefined;
  readonly retryAfterMs: number | undefined;
  /** The error body as HF sent it (first 4 KiB), for matches on its raw text; never in `message`. */
  readonly responseText: string | undefined;

  constructor(init: {
    kind: HfErrorKind;
    operation: string;
    status?: number | undefined;
    providerMessage?: string | undefined;
    requestId?: string | undefined;
    retryAfterMs?: number | undefined;
    responseText?: string | undefined;
    detail?: string;
    cause?: unknown;
  }) {
    const status = init.status === undefined ? "" : ` ${init.status}`;
    const said = init.providerMessage ?? init.detail ?? "";
    const id = init.requestId ? ` (request id ${init.requestId})` : "";
    super(
      `Hugging Face ${init.operation} failed (${init.kind}${status}): ${said}${id}. ${advice(init.kind)}`,
      {
        cause: init.cause,
      },
    );
    this.name = "HuggingFaceApiError";
    this.kind = init.kind;
    this.operation = init.operation;
    this.status = init.status;
    this.providerMessage = init.providerMessage;
    this.requestId = init.requestId;
    this.retryAfterMs = init.retryAfterMs;
    this.responseText = init.responseText?.slice(0, 4_096);
  }

  /** Whether the same call may succeed later without any change on our side. */
  get retryable(): boolean {
    return this.kind === "rate_limited" || this.kind === "server" || this.kind === "unreachable";
  }
}

function advice(kind: HfErrorKind): string {
  switch (kind) {
    case "rejected_credential":
      return "Check the Hugging Face token and that it may manage endpoints in this namespace; set it again.";
    case "forbidden":
      return "The token lacks a permission: use a fine-grained token allowed to manage Inference Endpoints.";
    case "not_found":
      return "Check the namespace and endpoint name.";
    case "conflict":
      return "Pick another name, or adopt the existing endpoint.";
    case "invalid_request":
      return "Change the request as the message says.";
    case "rate_limited":
      return "Wait for the retry-after period, then try again.";
    case "server":
      return "Hugging Face had a problem; try again later.";
    case "uncertain":
      return "It may have taken effect: list the endpoints to find out before trying again.";
    case "unreachable":
      return "Check the network and the configured API base URL; the call can be retried.";
    case "certificate":
      return "The server's certificate is not trusted; verification cannot be turned off (add its CA with tls.extra_ca_file if it is yours).";
    case "protocol":
      return "The endpoints API answered in an unexpected shape; check the configured base URL.";
  }
}

/**
 * A resume of a running endpoint: HF answers 400 with "already running" somewhere in its body, whose
 * shape is not documented; huggingface_hub matches the raw response text, so does this.
 */
export function isAlreadyRunning(status: number | undefined, responseText: string | undefined): boolean {
  return status === 400 && (responseText ?? "").includes("already running");
}

/** HF's message from an error body, in every shape HF clients tolerate (reference §1.4). */
export function providerMessageOf(text: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const trimmed = text.trim();
    return trimmed === "" ? undefined : trimmed.slice(0, 500);
  }
  if (typeof body !== "object" || body === null) return undefined;
  const record = body as Record<string, unknown>;
  const parts: string[] = [];
  const error = record["error"];
  if (typeof error === "string") parts.push(error);
  else if (Array.isArray(error)) parts.push(...error.filter((e): e is string => typeof e === "string"));
  else if (typeof record["message"] === "string") parts.push(record["message"]);
  if (typeof record["error_description"] === "string") parts.push(record["error_description"]);
  if (Array.isArray(record["errors"]))
    for (const entry of record["errors"])
      if (
        typeof entry === "object" &&
        entry !== null &&
        typeof (entry as Record<string, unknown>)["message"] === "string"
      )
        parts.push((entry as Record<string, string>)["message"] ?? "");
  return parts.length > 0 ? parts.join("; ").slice(0, 1000) : undefined;
}

export function kindOfStatus(status: number): HfErrorKind {
  if (status === 401) return "rejected_credential";
  if (status === 403) return "forbidden";
  if (status === 404) return "not_found";
  if (status === 409) return "conflict";
  if (status === 429) return "rate_limited";
  if (status >= 500) return "server";
  return "invalid_request";
}

/** `{ retryAfterMs }` when Hugging Face said how long to wait (a 429's retry-after), else nothing. */
export function retryAfterOf(error: unknown): { retryAfterMs?: number } {
  return error instanceof HuggingFaceApiError && error.retryAfterMs !== undefined
    ? { retryAfterMs: error.retryAfterMs }
    : {};
}
