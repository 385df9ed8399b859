/**
 * Child process of the proxy-overhead benchmark: engine emulators on loopback, one per entry of
 * the JSON argument (each serves one model at its own per-token delay), reported to the parent as
 * `{ engines: [{ model, url }] }`. An entry with `tls` serves HTTPS, one with `apiKey` wants that
 * bearer token (a rented node, as vLLM's `--api-key`). Runs until the parent says close or goes away.
 * Must not know: the PAIR node, the load, the report.
 */

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startEngineEmulator, type EngineEmulator } from "@pair/emulators";
import { childArg, serveParent } from "./child-protocol.js";

export interface EngineChildArg {
  readonly engines: readonly {
    readonly model: string;
    readonly tokenDelayMs: number;
    readonly maxTokens: number;
    readonly maxConcurrent: number;
    /** PEM key and certificate: serve HTTPS. */
    readonly tls?: { readonly key: string; readonly cert: string };
    /** Bearer token every `/v1` request must carry. */
    readonly apiKey?: string;
  }[];
  /** Also serve `GET /stats` (every emulator's counters, JSON) on a port of its own: batch-load's busy share. */
  readonly statsServer?: boolean;
}

export interface EngineChildReady {
  readonly engines: readonly { readonly model: string; readonly url: string }[];
  /** With `statsServer`: `http://127.0.0.1:PORT/stats`. */
  readonly statsUrl?: string;
}

const arg = childArg<EngineChildArg>();
const emulators: EngineEmulator[] = [];
for (const e of arg.engines)
  emulators.push(
    await startEngineEmulator({
      api: "openai",
      name: `bench-${e.model}`,
      models: [{ name: e.model, maxTokens: e.maxTokens }],
      tokenDelayMs: e.tokenDelayMs,
      maxConcurrent: e.maxConcurrent,
      ...(e.tls === undefined ? {} : { tls: e.tls }),
      ...(e.apiKey === undefined ? {} : { apiKey: e.apiKey }),
    }),
  );
const stats =
  arg.statsServer === true
    ? createServer((_req, res) => {
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify(emulators.map((e) => e.stats())));
      })
    : undefined;
if (stats !== undefined) await new Promise<void>((done) => stats.listen(0, "127.0.0.1", done));
const ready: EngineChildReady = {
  engines: arg.engines.map((e, i) => ({ model: e.model, url: emulators[i]!.url })),
  ...(stats === undefined
    ? {}
    : { statsUrl: `http://127.0.0.1:${(stats.address() as AddressInfo).port}/stats` }),
};
serveParent(ready, async () => {
  stats?.close();
  for (const e of emulators) await e.close();
});
