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

/**
 * What a create refused for lack of capacity says. v2's wording is not documented; this is v1's
 * live message (reference §1.4) with its `create pod: ` prefix and its status (500) [I]. Clients
 * must classify it by substring, never by status.
 */
export const NO_CAPACITY_DETAIL =
  "create pod: There are no longer any instances available with the requested specifications. Please refresh and try again.";

/** A start refused because the pod's host has no free GPU left (v1/GraphQL wording, §1.4) [I: status 500]. */
export const NO_FREE_GPUS_DETAIL = "There are not enough free GPUs on the host machine to start this pod.";
