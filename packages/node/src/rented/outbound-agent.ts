/**
 * The one dispatcher for outbound HTTPS to rented nodes and provider APIs: certificates are always
 * verified against the system's trust store plus, when `tls.extra_ca_file` names one, one more CA
 * (how a private gateway or a test emulator is trusted). There is no way to turn verification off.
 * Must not know: what is called through it.
 */

import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import { Agent } from "undici";

export interface OutboundOptions {
  /** PEM file of one more trusted CA, or null. */
  readonly extraCaFile: string | null;
  readonly connectTimeoutMs?: number;
}

export function createOutboundAgent(options: OutboundOptions): Agent {
  const extra = options.extraCaFile === null ? undefined : readFileSync(options.extraCaFile, "utf8");
  return new Agent({
    keepAliveTimeout: 10_000,
    connections: 128,
    connect: {
      timeout: options.connectTimeoutMs ?? 10_000,
      rejectUnauthorized: true,
      ...(extra === undefined ? {} : { ca: [...rootCertificates, extra] }),
    },
  });
}
