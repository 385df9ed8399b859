/**
 * The one proof that a paired node is at an address: `GET /pair/v1/peer/hello` there over mTLS, with
 * an agent that presents this node's certificate and accepts only the peer's pinned certificate
 * (peer-client.ts), answered with the peer's own node id. Anything else — refused, another
 * certificate, no answer within `timeoutMs`, another node id — is a failure, with the reason
 * (`unreachable` when nothing listens there at all, so the caller need not ask that address more).
 * The certificate is always verified (by the pin): this is also how discovery learns whether a
 * static address is one of our pinned peers.
 * Must not know: how the address was found, the trust store's file, mDNS.
 */

import { request } from "undici";
import { createPeerAgent, PEER_HELLO_PATH, type NodeIdentity, type PinnedPeer } from "../peers/index.js";

const MAX_HELLO_BYTES = 4 * 1024;

export type AddressCheck =
  { readonly ok: true } | { readonly ok: false; readonly reason: string; readonly unreachable?: boolean };

/** Whether `peer` answers as itself at `address` (`HOST:PORT`), over mTLS under its pin. */
export async function checkPeerAddress(
  identity: NodeIdentity,
  peer: Pick<PinnedPeer, "node_id" | "cert_pem" | "fingerprint">,
  address: string,
  options: { readonly timeoutMs: number; readonly signal?: AbortSignal },
): Promise<AddressCheck> {
  const agent = createPeerAgent({
    identity,
    peer,
    limits: {
      connectTimeoutMs: options.timeoutMs,
      headersTimeoutMs: options.timeoutMs,
      bodyTimeoutMs: options.timeoutMs,
      maxConnections: 1,
    },
  });
  const signals = [
    AbortSignal.timeout(options.timeoutMs),
    ...(options.signal === undefined ? [] : [options.signal]),
  ];
  try {
    const res = await request(`https://${address}${PEER_HELLO_PATH}`, {
      dispatcher: agent,
      signal: AbortSignal.any(signals),
    });
    let text = "";
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      text += chunk.toString("utf8");
      if (text.length > MAX_HELLO_BYTES) return { ok: false, reason: "an oversized hello" };
    }
    if (res.statusCode !== 200) return { ok: false, reason: `HTTP ${res.statusCode} for ${PEER_HELLO_PATH}` };
    const nodeId = (JSON.parse(text) as { node_id?: unknown } | null)?.node_id;
    if (nodeId !== peer.node_id) return { ok: false, reason: `answered as node ${String(nodeId)}` };
    return { ok: true };
  } catch (cause) {
    const reason = describe(cause, options.timeoutMs);
    return nothingListens(cause) ? { ok: false, reason, unreachable: true } : { ok: false, reason };
  } finally {
    await agent.destroy().catch(() => undefined);
  }
}

/** TLS errors that mean the certificate presented is not the pinned one. */
const NOT_THE_PIN = new Set([
  "ERR_PAIR_PEER_NOT_PINNED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_SIGNATURE_FAILURE",
]);

/** Socket errors that mean nothing listens at the address (or it cannot be reached at all). */
const NOTHING_LISTENS = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH"]);

function codesOf(cause: unknown): [string, string] {
  const code = (cause as { code?: unknown } | null)?.code;
  const inner = (cause as { cause?: { code?: unknown } } | null)?.cause?.code;
  return [String(code), String(inner)];
}

function nothingListens(cause: unknown): boolean {
  return codesOf(cause).some((code) => NOTHING_LISTENS.has(code));
}

function describe(cause: unknown, timeoutMs: number): string {
  if (cause instanceof Error && (cause.name === "TimeoutError" || cause.name === "AbortError"))
    return `no answer within ${timeoutMs} ms`;
  const [code, inner] = codesOf(cause);
  if (code === "ECONNREFUSED" || inner === "ECONNREFUSED") return "connection refused";
  if (nothingListens(cause)) return "host unreachable";
  if (NOT_THE_PIN.has(code) || NOT_THE_PIN.has(inner)) return "another certificate than the pinned one";
  return cause instanceof Error ? cause.message : String(cause);
}
