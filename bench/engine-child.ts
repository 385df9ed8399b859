/**
 * Child process of the proxy-overhead benchmark: engine emulators on loopback, one per entry of
 * the JSON argument (each serves one model at its own per-token delay), reported to the parent as
 * `{ engines: [{ model, url }] }`. Runs until the parent says close or goes away.
 * Must not know: the PAIR node, the load, the report.
 */

import { startEngineEmulator, type EngineEmulator } from "@pair/emulators";
import { serveParent } from "./child-protocol.js";

export interface EngineChildArg {
  readonly engines: readonly {
    readonly model: string;
    readonly tokenDelayMs: number;
    readonly maxTokens: number;
    readonly maxConcurrent: number;
  }[];
}

export interface EngineChildReady {
  readonly engines: readonly { readonly model: string; readonly url: string }[];
}

const arg = JSON.parse(process.argv[2] ?? "{}") as EngineChildArg;
const emulators: EngineEmulator[] = [];
for (const e of arg.engines)
  emulators.push(
    await startEngineEmulator({
      api: "openai",
      name: `bench-${e.model}`,
      models: [{ name: e.model, maxTokens: e.maxTokens }],
      tokenDelayMs: e.tokenDelayMs,
      maxConcurrent: e.maxConcurrent,
    }),
  );
const ready: EngineChildReady = {
  engines: arg.engines.map((e, i) => ({ model: e.model, url: emulators[i]!.url })),
};
serveParent(ready, async () => {
  for (const e of emulators) await e.close();
});
