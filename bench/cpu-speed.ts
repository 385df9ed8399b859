/**
 * How fast one core of this machine is right now: the same single-threaded work (200,000 chained
 * SHA-256 digests of 64 bytes) timed `--rounds` times back to back, in ms per round. Run it on an
 * idle machine before and after a benchmark: on a shared host the cores' speed moves by a third
 * within seconds (docs/performance.md, "Reading the numbers"), and every latency target moves with it.
 *
 *   npx tsx bench/cpu-speed.ts [--rounds 8]
 *
 * Must not know: PAIR.
 */

import { createHash } from "node:crypto";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "8" } }, strict: true });
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 100) throw new RangeError("--rounds: 1..100");

const times: number[] = [];
for (let r = 0; r < rounds; r++) {
  const start = performance.now();
  let digest = Buffer.alloc(64);
  for (let i = 0; i < 200_000; i++) digest = createHash("sha256").update(digest).digest();
  times.push(performance.now() - start);
}
const sorted = [...times].sort((a, b) => a - b);
console.log(`ms per round: ${times.map((t) => t.toFixed(0)).join(" ")}`);
console.log(
  `min ${sorted[0]!.toFixed(0)}, median ${sorted[Math.floor(rounds / 2)]!.toFixed(0)}, max ${sorted[rounds - 1]!.toFixed(0)}`,
);
