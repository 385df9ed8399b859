/**
 * The one dispatcher for outbound HTTPS to rented nodes and provider APIs: certificates are always
 * verified against the system's trust store plus, when `tls.extra_ca_file` names one, one more CA
 * (how a private gateway or a test emulator is trusted). There is no way to turn verification off.
 *
 * The trust store is built once into one TLS secure context that every connection shares. Given as
 * `ca` in the connect options instead, it was built again for each new connection: parsing the ~140
 * root certificates took about 21 ms of CPU on the event loop per connection on this machine, so 64
 * streams opening their connections at once stalled the node for over a second (the rented route's
 * p99 in `npm run bench`).
 * Must not know: what is called through it.
 */

import { readFileSync } from "node:fs";
import { createSecureContext, rootCertificates, type SecureContext } from "node:tls";
import { Agent } from "undici";

export interface OutboundOptions {
  /** PEM file of one more trusted CA, or null. */
  readonly extraCaFile: string | null;
  readonly connectTimeoutMs?: number;
}

/** The trust store of outbound connections: the system's roots, plus `extraCaPem` when given. */
export function outboundSecureContext(extraCaPem: string | undefined): SecureContext {
  return createSecureContext(extraCaPem === undefined ? {} : { ca: [...rootCertificates, extraCaPem] });
}

/** max_concurrent's upper limit: a rented node at that limit never waits for a connection. */
export const OUTBOUND_CONNECTIONS_PER_ORIGIN = 1_024;

export function createOutboundAgent(options: OutboundOptions): Agent {
  const extra = options.extraCaFile === null ? undefined : readFileSync(options.extraCaFile, "utf8");
  return new Agent({
    keepAliveTimeout: 10_000,
    // Per origin; each rented node's max_concurrent is the bound that counts (a lower one here was a
    // second, hidden queue: 256 streams to one node waited for 128 connections).
    connections: OUTBOUND_CONNECTIONS_PER_ORIGIN,
    connect: {
      timeout: options.connectTimeoutMs ?? 10_000,
      rejectUnauthorized: true,
      secureContext: outboundSecureContext(extra),
    },
  });
}
