/**
 * The emulator's Hugging Face accounts: bearer tokens, each belonging to one user namespace (and
 * optionally org namespaces), with a role. Answers "who is this" and "may they act on namespace X".
 * Must not know: HTTP routes, endpoints.
 */

import type { IncomingHttpHeaders } from "node:http";

export type TokenRole = "read" | "write" | "fineGrained";

export interface TokenGrant {
  /** The user namespace (whoami `name`). */
  readonly namespace: string;
  /** Default "fineGrained" (allowed to manage endpoints). "read" may not mutate. */
  readonly role?: TokenRole;
  /** Organisations the user belongs to (they may act on these namespaces too). */
  readonly orgs?: readonly string[];
}

export interface Account {
  readonly namespace: string;
  readonly role: TokenRole;
  readonly orgs: readonly string[];
  /** A stable 24-hex id, as the Hub gives users. */
  readonly id: string;
}

export class TokenRegistry {
  readonly #accounts = new Map<string, Account>();

  add(token: string, grant: TokenGrant): void {
    if (!/^\S{8,}$/.test(token))
      throw new RangeError("tokens.add: a token is at least 8 non-space characters");
    if (!/^[A-Za-z0-9][A-Za-z0-9-]*$/.test(grant.namespace))
      throw new RangeError(`tokens.add: namespace "${grant.namespace}" is not a Hub name`);
    const id = Array.from(grant.namespace.padEnd(12, "0").slice(0, 12), (c) =>
      (c.charCodeAt(0) % 256).toString(16).padStart(2, "0"),
    ).join("");
    this.#accounts.set(token, {
      namespace: grant.namespace,
      role: grant.role ?? "fineGrained",
      orgs: [...(grant.orgs ?? [])],
      id,
    });
  }

  remove(token: string): void {
    this.#accounts.delete(token);
  }

  /** The account of a bearer token in `authorization`, or undefined (missing, malformed, unknown). */
  fromHeaders(headers: IncomingHttpHeaders): Account | undefined {
    const match = /^Bearer (\S+)$/i.exec(headers.authorization ?? "");
    return match?.[1] === undefined ? undefined : this.#accounts.get(match[1]);
  }
}

export function mayAccess(account: Account, namespace: string): boolean {
  return account.namespace === namespace || account.orgs.includes(namespace);
}
