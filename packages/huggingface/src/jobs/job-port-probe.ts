/**
 * Whether a job's exposed port answers: `GET {exposeUrl}/health` with the HF token (the Jobs proxy
 * forwards only requests carrying a token with read access to the namespace). 2xx → true; anything
 * else (the proxy's refusal while the model loads, a timeout, a reset) → false. Verification is
 * always on; an extra CA may be added for tests.
 * Must not know: stages, the contract.
 */

import { rootCertificates } from "node:tls";
import { Agent, request } from "undici";
import type { RevealableToken } from "../secret-token.js";

export type PortProbe = (exposeUrl: string) => Promise<boolean>;

export interface PortProbeOptions {
  readonly token: RevealableToken;
  readonly extraCaPem?: string;
  /** Default 5 s. */
  readonly timeoutMs?: number;
}

/** A probe and the agent to close when done. */
export function httpsPortProbe(options: PortProbeOptions): { probe: PortProbe; close: () => Promise<void> } {
  const timeoutMs = options.timeoutMs ?? 5_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 60_000)
    throw new RangeError(`httpsPortProbe: timeoutMs must be an integer in [1, 60000], got ${timeoutMs}`);
  const agent = new Agent({
    connect: {
      ...(options.extraCaPem === undefined ? {} : { ca: [...rootCertificates, options.extraCaPem] }),
      rejectUnauthorized: true,
      timeout: timeoutMs,
    },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const probe: PortProbe = async (exposeUrl) => {
    try {
      const res = await request(`${exposeUrl.replace(/\/+$/, "")}/health`, {
        method: "GET",
        dispatcher: agent,
        headers: { authorization: `Bearer ${options.token.reveal()}` },
      });
      await res.body.dump();
      return res.statusCode >= 200 && res.statusCode < 300;
    } catch {
      return false;
    }
  };
  return { probe, close: () => agent.close() };
}
