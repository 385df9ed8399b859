/**
 * The one refusal the dialect layer produces: a request that cannot be read, or cannot be carried
 * to the other dialect without changing its meaning. It names the field path
 * (`messages[2].content`) so the client can find the problem; the router turns it into PAIR's
 * `invalid_request` envelope (`pair-errors.ts`).
 *
 * Must not know: HTTP, routing, either dialect's shapes.
 */

export interface InvalidRequest {
  readonly code: "invalid_request";
  /** `"<path>: <problem>"`, or `"request body: <problem>"` for the body itself. */
  readonly message: string;
  /** The field path, e.g. `messages[2].content`; `""` for the body as a whole. */
  readonly path: string;
}

export type DialectResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: InvalidRequest };

export function invalidRequest(path: string, problem: string): InvalidRequest {
  return { code: "invalid_request", message: `${path === "" ? "request body" : path}: ${problem}`, path };
}

export function accepted<T>(value: T): { readonly ok: true; readonly value: T } {
  return { ok: true, value };
}

export function refused(
  path: string,
  problem: string,
): { readonly ok: false; readonly error: InvalidRequest } {
  return { ok: false, error: invalidRequest(path, problem) };
}
