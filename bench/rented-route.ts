/**
 * A quick look at the rented route (issue 13): time to first chunk through the node to a rented node
 * (HTTPS + bearer to an emulator attached as an openai-compatible rented node) against the node's
 * local route (plain HTTP to an emulator as a local engine) in the same run, at 1, 16 and 64 paced
 * streams (5 ms/token, 64 tokens), interleaved; with the node's CPU per stream for each.
 *
 *   npx tsx bench/rented-route.ts [--rounds 2] [--levels 1,16,64] [--routes local,rented]
 *                                 [--profile DIR]
 *
 * `--routes rented` loads the rented route alone, so `--profile` (the node's CPU profile, written to
 * DIR when it stops, for `bench/summarize-cpu-profile.ts`) shows that route's time only.
 *
 * Three processes, as in proxy-overhead: the emulators, the node (children), the load (this one).
 * Must not know: the node's internals (it is measured from outside, over HTTP).
 */

import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { createTestCa } from "@pair/testkit";
import { startEngineChild, startNodeChild } from "./bench-setup.js";
import type { BenchChild } from "./child-protocol.js";
import { runLoad } from "./load-generator.js";
import { cpuMs } from "./load-metrics.js";
import { loadAverage1m } from "./machine-info.js";
import { chatBody, loadFigures } from "./measure.js";

const TOKENS = 64;
const DELAY_MS = 5;
const SLOTS = 512;
const LEVELS = [1, 16, 64] as const;

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "2" },
    levels: { type: "string", default: LEVELS.join(",") },
    routes: { type: "string", default: "local,rented" },
    profile: { type: "string" },
  },
  strict: true,
});
const rounds = Number(values.rounds);
const levels = values.levels.split(",").map(Number);
if (!levels.every((l) => Number.isInteger(l) && l >= 1 && l <= 256))
  throw new RangeError("--levels: 1..256, comma-separated");
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 10) throw new RangeError("--rounds: 1..10");
const MODEL_OF = { local: "local-5ms", rented: "rent-5ms" } as const;
const routes = values.routes.split(",").map((r) => {
  if (r !== "local" && r !== "rented") throw new RangeError(`--routes: local and/or rented, got ${r}`);
  return MODEL_OF[r];
});

const children: BenchChild[] = [];
process.on("exit", () => children.forEach((c) => c.kill()));
try {
  const ca = await createTestCa();
  const leaf = await ca.issue();
  const token = randomBytes(24).toString("base64url");
  const [local, rented] = await startEngineChild(
    [
      { model: "local-5ms", tokenDelayMs: DELAY_MS, maxTokens: TOKENS, maxConcurrent: SLOTS },
      {
        model: "rent-5ms",
        tokenDelayMs: DELAY_MS,
        maxTokens: TOKENS,
        maxConcurrent: SLOTS,
        tls: { key: leaf.keyPem, cert: leaf.certPem },
        apiKey: token,
      },
    ],
    children,
  );
  const { node, target } = await startNodeChild(
    {
      engines: [{ name: "emu", model: "local-5ms", baseUrl: `${local!.url}/v1`, maxConcurrent: SLOTS }],
      rented: {
        baseUrl: `${rented!.url}/v1`,
        caPem: ca.certPem,
        token,
        models: ["rent-5ms"],
        maxConcurrent: SLOTS,
      },
    },
    {
      extraExecArgv:
        values.profile === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", resolve(values.profile)],
    },
    children,
  );
  const load = async (model: string, concurrency: number, measured: number) => {
    await node.sample("sample-start");
    const result = await runLoad({
      target,
      body: chatBody(model, TOKENS),
      concurrency,
      requestsPerWorker: measured,
      rampRequestsPerWorker: 1,
      staggerMs: TOKENS * DELAY_MS,
      requestTimeoutMs: 30_000,
    });
    const use = await node.sample("sample-stop");
    if (result.errors > 0) console.error(`  ! ${model}: ${result.errors} errors: ${result.firstError}`);
    return { f: loadFigures(result), cpu: cpuMs(use) / result.sent };
  };
  console.error(`load average ${loadAverage1m().toFixed(2)}; warm-up`);
  for (const m of routes) await load(m, 64, 1);
  for (let r = 0; r < rounds; r++)
    for (const c of levels) {
      const perWorker = c === 1 ? 10 : c === 16 ? 3 : 2;
      const line: string[] = [];
      for (const m of r % 2 === 0 ? routes : [...routes].reverse()) {
        const { f, cpu } = await load(m, c, perWorker);
        line.push(
          `${m}: first chunk p50 ${f.firstChunk.p50.toFixed(2)} p99 ${f.firstChunk.p99.toFixed(2)} ms, ` +
            `total p99 ${f.total.p99.toFixed(1)} ms, node CPU/stream ${cpu.toFixed(3)} ms`,
        );
      }
      console.log(`round ${r + 1}, ${c} streams: ${line.join(" | ")}`);
    }
  console.error(`load average ${loadAverage1m().toFixed(2)}`);
} finally {
  for (const c of [...children].reverse()) await c.stop();
}
process.exit(0);
