/**
 * RFC 9457 problem details as Runpod v2 sends them (`application/problem+json`,
 * `{title, status, detail, errors?}`), and the titles it uses per status.
 * Must not know: pods, routes.
 */

export interface Problem {
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly errors?: readonly string[];
}

const TITLES: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Payload Too Large",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

export function problem(status: number, detail: string, errors?: readonly string[]): Problem {
  const title = TITLES[status] ?? (status >= 500 ? "Internal Server Error" : "Bad Request");
  return errors && errors.length > 0 ? { status, title, detail, errors } : { status, title, detail };
}

export const POD_NOT_FOUND = (): Problem => problem(404, "pod not found");

/** The backend's no-capacity sentence (reference §1.4, seen live through v1 and GraphQL). */
const NO_INSTANCES =
  "There are no longer any instances available with the requested specifications. Please refresh and try again.";

/** v1's create refusal for lack of capacity: the sentence prefixed `create pod: `, status 500 [F]. */
export const NO_CAPACITY_DETAIL = `create pod: ${NO_INSTANCES}`;

/** Which API generation's error shapes the emulator speaks: v2 (default) or v1 (the old live shapes). */
export type ErrorDialect = "v2" | "v1";

/**
 * A create refused for lack of capacity. v2 answers a 400 problem whose free-text `detail` carries
 * the backend's sentence (reference §10: problem+json 400/403; the wording is not documented [I]);
 * v1 answered 500 with the `create pod: ` prefix (§1.4). A client must classify by wording.
 */
export function noCapacity(dialect: ErrorDialect): Problem {
  return dialect === "v1" ? problem(500, NO_CAPACITY_DETAIL) : problem(400, NO_INSTANCES);
}

/** Why a create is refused before any capacity check (a switch of the faults). */
export type CreateRefusal = "funds" | "forbidden";

/**
 * v2's refusals for money (402) and for a key without access to pods (403, "as in v1", §1.4/§10).
 * The funds wording is v1's live one (§1.4) [I for v2]; the 403 detail is a guess [I].
 */
export function createRefusal(reason: CreateRefusal): Problem {
  return reason === "funds"
    ? problem(402, "Your account balance is too low to rent this pod. Please add funds to your account.")
    : problem(403, "forbidden: this API key does not have permission to create pods");
}

/** A start refused because the pod's host has no free GPU left (v1/GraphQL wording, §1.4) [I: status 500]. */
export const NO_FREE_GPUS_DETAIL = "There are not enough free GPUs on the host machine to start this pod.";
