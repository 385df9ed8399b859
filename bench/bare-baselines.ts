/**
 * The baselines of `npm run bench` (issue 33): for each PAIR route, the same hops done by bare relays
 * (`bare-proxy-child.ts`), so each PAIR row is read as a ratio to what its hops cost on this machine in
 * the same run.
 *   bare         client → relay → (HTTP) → engine                              for the local route
 *   bare-peer    client → relay → (mTLS, HTTP/2, pinned) → relay → engine      for the peer hop
 *   bare-rented  client → relay → (HTTPS, bearer, trusted CA) → emulator       for the rented route
 * The peer link's certificates are node identities made as a PAIR node makes its own
 * (`loadOrCreateIdentity`), each end trusting only the other's.
 * Must not know: PAIR's nodes, the load, the report.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadOrCreateIdentity, SYSTEM_CLOCK } from "@pair/cluster";
import type { BareProxyArg, BareProxyReady, BareRoute } from "./bare-proxy-child.js";
import { forkChild, type BenchChild } from "./child-protocol.js";

export interface BareBaselines {
  readonly bare: BenchChild;
  readonly peerNear: BenchChild;
  readonly peerFar: BenchChild;
  readonly rented: BenchChild;
}

export interface BareBaselineOptions {
  /** Route name (`d5`) → the local engine's origin. */
  readonly routes: Readonly<Record<string, string>>;
  /** The rented emulator: its HTTPS origin, the CA that issued its certificate, its bearer token. */
  readonly rented: {
    readonly route: string;
    readonly origin: string;
    readonly caPem: string;
    readonly token: string;
  };
  /** Every child is pushed here as it starts, so the caller's guard stops it. */
  readonly children: BenchChild[];
  readonly here: string;
  readonly cwd: string;
}

export const bareUrl = (child: BenchChild): string => (child.ready as BareProxyReady).url;

export async function startBareBaselines(o: BareBaselineOptions): Promise<BareBaselines> {
  const start = async (name: string, arg: BareProxyArg) => {
    const child = await forkChild({ name, script: resolve(o.here, "bare-proxy-child.ts"), arg, cwd: o.cwd });
    o.children.push(child);
    return child;
  };
  const dir = mkdtempSync(join(tmpdir(), "pair-bench-bare-"));
  try {
    const near = await loadOrCreateIdentity(join(dir, "near"), { name: "bare-near", clock: SYSTEM_CLOCK });
    const far = await loadOrCreateIdentity(join(dir, "far"), { name: "bare-far", clock: SYSTEM_CLOCK });
    const bare = await start("bare-proxy", { routes: o.routes });
    const peerFar = await start("bare-peer-far", {
      routes: o.routes,
      listen: {
        kind: "h2-mtls",
        certPem: far.certPem,
        keyPem: far.privateKeyPem.reveal(),
        clientCertPem: near.certPem,
      },
    });
    const toFar: BareRoute = {
      upstream: {
        kind: "h2-mtls",
        origin: bareUrl(peerFar),
        certPem: near.certPem,
        keyPem: near.privateKeyPem.reveal(),
        serverCertPem: far.certPem,
        serverFingerprint: far.fingerprint,
      },
      keepPrefix: true,
    };
    const peerNear = await start("bare-peer-near", {
      routes: Object.fromEntries(Object.keys(o.routes).map((name) => [name, toFar])),
    });
    const rented = await start("bare-rented", {
      routes: {
        [o.rented.route]: {
          upstream: { kind: "https", origin: o.rented.origin, caPem: o.rented.caPem, token: o.rented.token },
        },
      },
    });
    return { bare, peerNear, peerFar, rented };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
