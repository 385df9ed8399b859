/**
 * Who is at a cluster port? Asked of each static `peers` address, cheaply and without trusting the
 * answer for anything but a label:
 * - the node id: a TLS 1.3 handshake, offering no client certificate and sending no data, reads the
 *   certificate the port presents; a PAIR node certificate (self-signed P-256, node-certificate.ts)
 *   names its node id. The certificate is NOT verified here — that is the point: it is unknown — and
 *   nothing learnt is trusted: a paired node's address moves only after an mTLS call under its pin
 *   (address-check.ts), and an unpaired one is only listed. The peer refuses the handshake at its end
 *   (no client certificate); by then the certificate has been read.
 * - the name, for a node that is not paired: a plain `GET /` on the port, which a PAIR node answers
 *   404 `{"node": "<name>"}` (pairing-server.ts).
 * Must not know: the trust store, mDNS, what the answer leads to.
 */

import { connect, type PeerCertificate } from "node:tls";
import { request } from "undici";
import { isPeerName, readNodeCertificate } from "../cluster/index.js";
import { formatHostPort, type HostPort } from "../config/index.js";

const MAX_NAME_ANSWER_BYTES = 4 * 1024;

/** What the certificate at a cluster port names. */
export interface PortCertificate {
  readonly nodeId: string;
  /** SHA-256 of the certificate's DER, lowercase hex (as presented, not verified). */
  readonly fingerprint: string;
}

/** Read the node id of the certificate presented at `address`. Rejects when it is not a PAIR node's. */
export function readPortCertificate(
  address: HostPort,
  options: { readonly timeoutMs: number; readonly signal?: AbortSignal },
): Promise<PortCertificate> {
  return new Promise<PortCertificate>((resolve, reject) => {
    const shown = formatHostPort(address);
    const socket = connect({
      host: address.host,
      port: address.port,
      minVersion: "TLSv1.3",
      // Read, never trusted: see the header. No data is sent on this connection.
      rejectUnauthorized: false,
      timeout: options.timeoutMs,
    });
    const finish = (error: Error | undefined, value?: PortCertificate): void => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      socket.destroy();
      if (error !== undefined) reject(error);
      else if (value !== undefined) resolve(value);
    };
    const onAbort = (): void => finish(new Error(`stopped asking ${shown}`));
    const timer = setTimeout(
      () => finish(new Error(`no TLS handshake with ${shown} within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    options.signal?.addEventListener("abort", onAbort, { once: true });
    socket.once("secureConnect", () => {
      const raw = (socket.getPeerCertificate() as Partial<PeerCertificate>).raw;
      if (!(raw instanceof Uint8Array) || raw.length === 0)
        return finish(new Error(`${shown} presented no certificate`));
      const pem = `-----BEGIN CERTIFICATE-----\n${(
        Buffer.from(raw)
          .toString("base64")
          .match(/.{1,64}/g) ?? []
      ).join("\n")}\n-----END CERTIFICATE-----\n`;
      const read = readNodeCertificate(pem);
      if (!read.ok) return finish(new Error(`${shown} is not a PAIR cluster port: ${read.reason}`));
      finish(undefined, { nodeId: read.certificate.nodeId, fingerprint: read.certificate.fingerprint });
    });
    socket.once("error", (error: Error) => finish(error));
    socket.once("timeout", () =>
      finish(new Error(`no TLS handshake with ${shown} within ${options.timeoutMs} ms`)),
    );
  });
}

/** The name a PAIR node's cluster port gives to a plain-HTTP request, or undefined. */
export async function readPortName(
  address: HostPort,
  options: { readonly timeoutMs: number; readonly signal?: AbortSignal },
): Promise<string | undefined> {
  const signals = [
    AbortSignal.timeout(options.timeoutMs),
    ...(options.signal === undefined ? [] : [options.signal]),
  ];
  try {
    const res = await request(`http://${formatHostPort(address)}/`, {
      signal: AbortSignal.any(signals),
      reset: true,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    let text = "";
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      text += chunk.toString("utf8");
      if (text.length > MAX_NAME_ANSWER_BYTES) return undefined;
    }
    if (res.statusCode !== 404) return undefined;
    const name = (JSON.parse(text) as { node?: unknown } | null)?.node;
    return typeof name === "string" && isPeerName(name) ? name : undefined;
  } catch {
    return undefined;
  }
}
