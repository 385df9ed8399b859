/**
 * Who may use the client port, decided per request: a caller on this machine (the socket's remote
 * address is loopback) needs no key; any other caller must send `Authorization: Bearer <key>` with
 * a key of this node's store. The key's id becomes the workload's requester (`local` for a loopback
 * caller without one). On loopback a bearer that is not a PAIR key (OpenAI clients always send
 * one, e.g. "unused") is ignored, but a PAIR key that fails is refused, so a mistyped key shows up
 * before the client moves to another machine. Also: the 401 in the route's dialect.
 * `X-Forwarded-For` and other headers never make a caller local: only the socket counts.
 * `X-Api-Key` is not read: OpenAI and Ollama clients send `Authorization`, and one header means one
 * place to parse and one rule when both disagree.
 * Must not know: files (the store is behind `KeyChecker`), routes, how the reply is written.
 */

import { isIP } from "node:net";
import { isLoopbackHost } from "../config/index.js";
import { looksLikeApiKey } from "./api-key-format.js";
import type { KeyChecker, KeyRefusal } from "./api-key-verifier.js";

/** The requester of a loopback caller that sent no key. */
export const LOCAL_REQUESTER = "local";

/** What counts as "this machine". Injectable: tests can only use loopback, so they pretend. */
export interface LoopbackPolicy {
  /** Whether a listen host reaches only this machine (`node.listen`). */
  isLoopbackHost(host: string): boolean;
  /** Whether a connection came from this machine, by its socket's remote address. */
  isLoopbackPeer(remoteAddress: string | undefined): boolean;
}

/**
 * `check`, remembering its answer for up to `maxAddresses` remote addresses (then it starts over):
 * a client on a keep-alive connection asks once per request, and the answer for an address never
 * changes.
 */
export function rememberPerAddress(
  check: (address: string) => boolean,
  maxAddresses = 1024,
): (address: string | undefined) => boolean {
  const known = new Map<string, boolean>();
  return (address) => {
    if (address === undefined) return false;
    let answer = known.get(address);
    if (answer === undefined) {
      answer = check(address);
      if (known.size >= maxAddresses) known.clear();
      known.set(address, answer);
    }
    return answer;
  };
}

/** The real rule: 127.0.0.0/8, ::1 and IPv4-mapped 127.x (`localhost` too, for a listen host). */
export const SOCKET_LOOPBACK_POLICY: LoopbackPolicy = {
  isLoopbackHost,
  isLoopbackPeer: rememberPerAddress((address) => isIP(address) !== 0 && isLoopbackHost(address)),
};

export type ClientAuthRefusal = "missing" | KeyRefusal;

export type ClientAuth =
  | { readonly ok: true; readonly requester: string }
  | { readonly ok: false; readonly reason: ClientAuthRefusal };

export interface ClientCredentials {
  readonly remoteAddress: string | undefined;
  /** The `Authorization` header as received. */
  readonly authorization: string | undefined;
}

/** The token of `Authorization: Bearer <token>` (scheme in any case), or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)?.[1];
}

export function authenticateClient(
  keys: KeyChecker,
  policy: LoopbackPolicy,
  credentials: ClientCredentials,
): ClientAuth {
  const local = policy.isLoopbackPeer(credentials.remoteAddress);
  const token = bearerToken(credentials.authorization);
  if (local && (token === undefined || !looksLikeApiKey(token)))
    return { ok: true, requester: LOCAL_REQUESTER };
  // No header, or one that is no bearer token at all (`Basic …`): no key was sent.
  if (token === undefined) return { ok: false, reason: "missing" };
  const check = keys.verify(token);
  return check.ok ? { ok: true, requester: check.id } : { ok: false, reason: check.reason };
}

export interface UnauthorizedReply {
  readonly status: 401;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

const MISSING_MESSAGE =
  "this PAIR node needs an API key from callers beyond its own machine: send it as " +
  "`Authorization: Bearer <key>` (create one on the node with `pair apikey create ID`)";
const REFUSED_MESSAGE =
  "the API key was not accepted: it is unknown, revoked or mistyped (a PAIR key reads " +
  "pair_<id>_<secret>; `pair apikey list` on the node shows the keys in force)";

/** The 401 for a refused caller, in the dialect of the route it called (Ollama for /api/…). */
export function unauthorizedReply(
  dialect: "openai" | "ollama",
  reason: ClientAuthRefusal,
): UnauthorizedReply {
  const message = reason === "missing" ? MISSING_MESSAGE : REFUSED_MESSAGE;
  const challenge =
    reason === "missing" ? 'Bearer realm="pair"' : 'Bearer realm="pair", error="invalid_token"';
  return {
    status: 401,
    headers: { "www-authenticate": challenge },
    body:
      dialect === "openai"
        ? { error: { message, type: "authentication_error", param: null, code: "unauthorized" } }
        : { error: message, code: "unauthorized" },
  };
}
