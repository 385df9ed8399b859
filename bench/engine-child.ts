/**
 * Child process of the proxy-overhead benchmark: engine emulators on loopback, one per entry of
 * the JSON argument (each serves one model at its own per-token delay), reported to the parent as
 * `{ engines: [{ model, url }] }`. An entry with `tls` serves HTTPS, one with `apiKey` wants that
 * bearer token (a rented node, as vLLM's `--api-key`). Runs until the parent says close or goes away.
 * Must not know: the PAIR node, the load, the report.
 */

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
}

export interface EngineChildReady {
  readonly engines: readonly { readonly model: string; readonly url: string }[];
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
const ready: EngineChildReady = {
  engines: arg.engines.map((e, i) => ({ model: e.model, url: emulators[i]!.url })),
};
serveParent(ready, async () => {
  for (const e of emulators) await e.close();
});
