/**
 * The client port's front door, decided from a request's headers before any route runs, any body is
 * read or any upstream is touched (so a refused page cannot wake a paused rented GPU):
 * - DNS rebinding: a `Host` that is not this machine's (`localhost`, `*.localhost`, a loopback
 *   address, the machine's own name, a name of `node.allowed_hosts`) is `host_refused` (403). On a
 *   listen beyond loopback only callers on this machine (who need no API key) are checked, and an IP
 *   address as `Host` passes too: a rebinding page can only put a name there.
 * - Browsers, as Ollama does with OLLAMA_ORIGINS: an `Origin` outside the allowed patterns (the local
 *   defaults, `node.allowed_origins`, `PAIR_ORIGINS`), or `Sec-Fetch-Site: cross-site` without any
 *   Origin, is `origin_refused` (403). A page of this very node (Origin = the admitted Host) passes.
 *   Allowed origins get CORS: preflights answered, `Access-Control-Allow-Origin` on every reply.
 * - No Origin and no cross-site mark (curl, SDKs, the CLI): unchanged.
 * Must not know: routes, authentication, how a refusal is counted.
 */

import type { IncomingMessage, RequestListener } from "node:http";
import { isIP } from "node:net";
import { isLoopbackHost } from "../config/index.js";
import { pairErrorReply, type PairError } from "@pair/dialects";

export interface FrontDoorPolicy {
  /** Whose `Host` is checked: every caller (a loopback listen), or only those on this machine. */
  readonly checkHostOf: "every-caller" | "loopback-callers";
  /** This machine's names (`os.hostname()`, with `.local`), any case. */
  readonly machineNames: readonly string[];
  /** `node.allowed_hosts`, normalised (lowercase; `*.lan` for any name under `lan`). */
  readonly allowedHosts: readonly string[];
  /** Origin patterns, normalised (lowercase; `*` any run of characters; `*` alone: every origin). */
  readonly allowedOrigins: readonly string[];
}

/** The request facts the decision reads (header values as received). */
export interface FrontDoorRequest {
  readonly method: string;
  readonly host: string | undefined;
  readonly origin: string | undefined;
  readonly secFetchSite: string | undefined;
  /** `Access-Control-Request-Method` / `-Headers` / `-Private-Network` of a preflight. */
  readonly preflightMethod: string | undefined;
  readonly preflightHeaders: string | undefined;
  readonly preflightPrivateNetwork: string | undefined;
  /** The socket's peer is this machine. */
  readonly loopbackCaller: boolean;
}

export type FrontDoorDecision =
  | { readonly kind: "refuse"; readonly error: PairError }
  | { readonly kind: "preflight"; readonly headers: Readonly<Record<string, string>> }
  | { readonly kind: "pass"; readonly headers: Readonly<Record<string, string>> };

/** How long a browser may cache a preflight's answer (Chromium caps it at 2 h). */
export const PREFLIGHT_MAX_AGE_S = 3_600;

const ALLOWED_METHODS = "GET, HEAD, POST, PUT, PATCH, DELETE";
/** Always allowed on a preflight, with whatever else the allowed page asks for. */
const BASE_ALLOWED_HEADERS = ["authorization", "content-type"];
/** Headers a browser app may read from a reply (besides the CORS-safelisted ones). */
const EXPOSED_HEADERS = "x-pair-served-by, x-pair-off-lan, x-pair-route-reason, retry-after";
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]{1,64}$/;
const MAX_PREFLIGHT_HEADERS = 64;

const HOST_REFUSED: PairError = {
  code: "host_refused",
  message:
    "this PAIR node answers only requests addressed to localhost, a loopback address, this machine's " +
    "name or a name in node.allowed_hosts (a web page using DNS rebinding sends its own name); if you " +
    "reach the node by this name, add it to node.allowed_hosts",
};
const ORIGIN_REFUSED: PairError = {
  code: "origin_refused",
  message:
    "a web page from this origin may not call this PAIR node: allow a browser app by adding its origin " +
    "to node.allowed_origins or to PAIR_ORIGINS (comma-separated, as OLLAMA_ORIGINS)",
};
const CROSS_SITE_REFUSED: PairError = {
  code: "origin_refused",
  message:
    "a cross-site browser request without an Origin may not call this PAIR node " +
    "(Sec-Fetch-Site: cross-site); browser apps are allowed by origin: node.allowed_origins or PAIR_ORIGINS",
};

/** The host name of a `Host` header (no port, no brackets, no final dot, lowercase), or undefined. */
export function hostNameOf(authority: string): string | undefined {
  const a = authority.trim().toLowerCase();
  let name: string;
  let port: string;
  if (a.startsWith("[")) {
    const end = a.indexOf("]");
    if (end < 0) return undefined;
    name = a.slice(1, end);
    port = a.slice(end + 1);
    if (isIP(name) !== 6) return undefined;
  } else {
    const colon = a.indexOf(":");
    name = colon < 0 ? a : a.slice(0, colon);
    port = colon < 0 ? "" : a.slice(colon);
  }
  if (port !== "" && !/^:[0-9]{1,5}$/.test(port)) return undefined;
  name = name.replace(/\.$/, "");
  return name === "" ? undefined : name;
}

function originMatcher(patterns: readonly string[]): (origin: string) => boolean {
  if (patterns.includes("*")) return () => true;
  const exact = new Set(patterns.filter((p) => !p.includes("*")));
  const globs = patterns
    .filter((p) => p.includes("*"))
    .map((p) => new RegExp(`^${p.split("*").map(escapeRegExp).join(".*")}$`));
  return (origin) => exact.has(origin) || globs.some((g) => g.test(origin));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The decision for one request; build once per policy (it compiles the patterns). */
export function frontDoor(policy: FrontDoorPolicy): (req: FrontDoorRequest) => FrontDoorDecision {
  const machine = new Set(policy.machineNames.map((n) => n.toLowerCase()));
  const exactHosts = new Set(policy.allowedHosts.filter((h) => !h.startsWith("*.")));
  const hostSuffixes = policy.allowedHosts.filter((h) => h.startsWith("*.")).map((h) => h.slice(1));
  const originAllowed = originMatcher(policy.allowedOrigins);

  const localName = (name: string, anyAddress: boolean): boolean =>
    isLoopbackHost(name) ||
    name.endsWith(".localhost") ||
    machine.has(name) ||
    exactHosts.has(name) ||
    hostSuffixes.some((suffix) => name.endsWith(suffix)) ||
    (anyAddress && isIP(name) !== 0);

  /** The Host is this machine's (or goes unchecked); undefined Host: HTTP/1.0, never a browser. */
  const hostAdmitted = (req: FrontDoorRequest): boolean => {
    if (policy.checkHostOf === "loopback-callers" && !req.loopbackCaller) return true;
    if (req.host === undefined) return true;
    const name = hostNameOf(req.host);
    return name !== undefined && localName(name, policy.checkHostOf === "loopback-callers");
  };

  return (req) => {
    if (!hostAdmitted(req)) return { kind: "refuse", error: HOST_REFUSED };
    if (req.origin === undefined)
      return req.secFetchSite?.toLowerCase() === "cross-site"
        ? { kind: "refuse", error: CROSS_SITE_REFUSED }
        : { kind: "pass", headers: {} };
    const origin = req.origin.trim().toLowerCase();
    const sameOrigin =
      req.host !== undefined &&
      (origin === `http://${req.host.toLowerCase()}` || origin === `https://${req.host.toLowerCase()}`);
    if (!sameOrigin && !originAllowed(origin)) return { kind: "refuse", error: ORIGIN_REFUSED };
    if (req.method === "OPTIONS" && req.preflightMethod !== undefined)
      return { kind: "preflight", headers: preflightHeaders(req.origin, req) };
    return {
      kind: "pass",
      headers: {
        "access-control-allow-origin": req.origin,
        "access-control-expose-headers": EXPOSED_HEADERS,
        vary: "Origin",
      },
    };
  };
}

function preflightHeaders(origin: string, req: FrontDoorRequest): Record<string, string> {
  const asked = (req.preflightHeaders ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter((h) => HEADER_NAME.test(h))
    .slice(0, MAX_PREFLIGHT_HEADERS);
  return {
    "access-control-allow-origin": origin,
    "access-control-allow-methods": ALLOWED_METHODS,
    "access-control-allow-headers": [...new Set([...BASE_ALLOWED_HEADERS, ...asked])].join(", "),
    "access-control-max-age": String(PREFLIGHT_MAX_AGE_S),
    // Chromium's Private Network Access: a public page calling a loopback server must be let in explicitly.
    ...(req.preflightPrivateNetwork === "true" ? { "access-control-allow-private-network": "true" } : {}),
    vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
    "content-length": "0",
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * `next` behind the front door: a refusal is answered at once in the route's dialect (Ollama's for
 * /api/…, else OpenAI's) with the connection closed, so an unread body goes nowhere.
 */
export function behindFrontDoor(
  decide: (req: FrontDoorRequest) => FrontDoorDecision,
  isLoopbackCaller: (remoteAddress: string | undefined) => boolean,
  next: RequestListener,
  onRefused: (code: PairError["code"]) => void = () => undefined,
): RequestListener {
  return (req, res) => {
    const decision = decide({
      method: req.method ?? "GET",
      host: req.headers.host,
      origin: header(req, "origin"),
      secFetchSite: header(req, "sec-fetch-site"),
      preflightMethod: header(req, "access-control-request-method"),
      preflightHeaders: header(req, "access-control-request-headers"),
      preflightPrivateNetwork: header(req, "access-control-request-private-network"),
      loopbackCaller: isLoopbackCaller(req.socket.remoteAddress),
    });
    switch (decision.kind) {
      case "refuse": {
        onRefused(decision.error.code);
        const reply = pairErrorReply(
          (req.url ?? "/").startsWith("/api/") ? "ollama" : "openai",
          decision.error,
        );
        const text = JSON.stringify(reply.body);
        res.writeHead(reply.status, {
          "content-type": "application/json; charset=utf-8",
          "content-length": String(Buffer.byteLength(text)),
          connection: "close",
        });
        res.end(text);
        return;
      }
      case "preflight":
        res.writeHead(204, decision.headers);
        res.end();
        return;
      case "pass":
        for (const [name, value] of Object.entries(decision.headers)) res.setHeader(name, value);
        next(req, res);
    }
  };
}
