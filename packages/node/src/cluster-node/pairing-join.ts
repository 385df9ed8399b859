/**
 * `pair join ADDRESS --pin PIN`: the initiator of PIN pairing, over plain HTTP/1.1 to the other
 * node's cluster port. Two requests on one connection (undici `Client`): the hello with this
 * node's certificate, then the confirm. The responder's certificate comes with its share; its
 * fingerprint, computed here, goes to the pairing core. Only after the responder's key
 * confirmation checks out is that exact certificate pinned. The whole exchange is bounded in time.
 * Must not know: the admin API, the CLI, the responder's side.
 */

import { err, ok, type Result } from "@pair/provision";
import { Client, errors } from "undici";
import { formatHostPort, type HostPort } from "../config/index.js";
import {
  type ClusterErrorCode,
  type NodeCertificate,
  type NodeIdentity,
  type PinnedPeer,
  type PinRequest,
  type PinResult,
  createInitiatorPairing,
  pairingError,
  type PairingErrorCode,
  type RandomBytes,
} from "@pair/cluster";
import {
  envelopeText,
  HANDSHAKE_PATH,
  MAX_ENVELOPE_BYTES,
  readEnvelope,
  type Envelope,
} from "./pairing-wire.js";

/** Longest a whole `pair join` exchange may take, connection included. */
export const DEFAULT_JOIN_TIMEOUT_MS = 15_000;

/** Why a join failed: a pairing code, or the two ways the address itself can be wrong. */
export type JoinErrorCode =
  PairingErrorCode | Extract<ClusterErrorCode, "peer_unreachable" | "not_a_pair_node">;

export interface JoinError {
  readonly code: JoinErrorCode;
  /** For people: names the address; never the PIN. */
  readonly message: string;
  /** The other node reported this refusal. */
  readonly remote: boolean;
}

export interface JoinOptions {
  readonly identity: NodeIdentity;
  /** The other node's `cluster_listen` address. */
  readonly address: HostPort;
  readonly pin: string;
  readonly randomBytes: RandomBytes;
  /** Trust the responder (the node's pinned-peers store). */
  readonly pinPeer: (request: PinRequest) => PinResult;
  readonly timeoutMs?: number;
  /** This node's cluster port, sent with the hello so the responder can reach it later. */
  readonly clusterPort?: number;
}

type Answer = Result<Envelope, JoinError>;

/** Pair with the node at `address` using the PIN it shows. */
export async function joinByPin(options: JoinOptions): Promise<Result<PinnedPeer, JoinError>> {
  const { identity, address } = options;
  const shown = formatHostPort(address);
  const created = createInitiatorPairing({
    self: { nodeId: identity.nodeId, name: identity.name, fingerprint: identity.fingerprint },
    pin: options.pin,
    randomBytes: options.randomBytes,
  });
  if (!created.ok) return err(fromPairing(created.error));
  const initiator = created.value;
  const timeoutMs = options.timeoutMs ?? DEFAULT_JOIN_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  const client = new Client(`http://${shown}`, {
    pipelining: 1,
    connect: { timeout: Math.min(timeoutMs, 10_000) },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  try {
    const hello = await post(
      client,
      envelopeText(initiator.start(), identity.certPem, options.clusterPort),
      signal,
      shown,
    );
    if (!hello.ok) return hello;
    const cert: NodeCertificate | undefined = hello.value.cert;
    const confirm = initiator.receive(hello.value.message, cert?.fingerprint);
    if (!confirm.ok || cert === undefined)
      return err(fromPairing(confirm.ok ? pairingError("pairing_failed", "no certificate") : confirm.error));
    const confirmed = await post(client, envelopeText(confirm.value), signal, shown);
    if (!confirmed.ok) return confirmed;
    const done = initiator.finish(confirmed.value.message);
    if (!done.ok) return err(fromPairing(done.error));
    const pinned = options.pinPeer({ name: done.value.name, certPem: cert.pem, address: shown });
    if (!pinned.ok)
      return err({
        code: "pairing_failed",
        message: `the PIN checked out, but ${shown} cannot be trusted: ${pinned.message}`,
        remote: false,
      });
    return ok(pinned.peer);
  } finally {
    // Destroy, not close: a responder left half-way must see the connection drop at once.
    await client.destroy().catch(() => undefined);
  }
}

async function post(client: Client, body: string, signal: AbortSignal, shown: string): Promise<Answer> {
  let status: number;
  let text: string;
  try {
    const response = await client.request({
      path: HANDSHAKE_PATH,
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      signal,
    });
    status = response.statusCode;
    const bounded = await readBounded(response.body);
    if (bounded === undefined) return err(notPair(shown, `an answer over ${MAX_ENVELOPE_BYTES} bytes`));
    text = bounded;
  } catch (cause) {
    return err(unreachable(shown, cause));
  }
  if (status === 404 || status === 401 || status >= 500)
    return err(notPair(shown, `HTTP ${status} for ${HANDSHAKE_PATH}`));
  const envelope = readEnvelope(text);
  if (!envelope.ok) {
    if (envelope.error.code === "malformed_message")
      return err(notPair(shown, `HTTP ${status} with an answer that is not a pairing message`));
    return err(fromPairing(envelope.error));
  }
  return ok(envelope.value);
}

async function readBounded(body: AsyncIterable<Buffer>): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ENVELOPE_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function fromPairing(error: { code: PairingErrorCode; message: string; remote: boolean }): JoinError {
  return { code: error.code, message: error.message, remote: error.remote };
}

function unreachable(shown: string, cause: unknown): JoinError {
  const code = (cause as { code?: unknown }).code;
  const why =
    cause instanceof errors.ConnectTimeoutError
      ? "no connection within the time allowed"
      : cause instanceof Error && cause.name === "TimeoutError"
        ? "no answer within the time allowed"
        : code === "ECONNREFUSED"
          ? "connection refused"
          : cause instanceof Error
            ? cause.message
            : String(cause);
  return { code: "peer_unreachable", message: `nothing answers on ${shown} (${why})`, remote: false };
}

function notPair(shown: string, what: string): JoinError {
  return {
    code: "not_a_pair_node",
    message: `${shown} answered, but not as a PAIR node's cluster port (${what})`,
    remote: false,
  };
}
