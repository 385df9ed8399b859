/**
 * Reads a sampling heap profile that counts collected objects too (`PAIR_BENCH_ALLOC_PROFILE`, see
 * bench/node-child.ts) and prints where the bytes were allocated: by function (self), and the
 * heaviest call paths, so the allocations per request can be found and cut.
 *
 *   npx tsx bench/summarize-alloc-profile.ts FILE [--top 30] [--per N]   # --per: divide by N (e.g. requests)
 *
 * Must not know: what the profiled process does.
 */

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface ProfileNode {
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly ProfileNode[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: "string", default: "30" }, per: { type: "string", default: "1" } },
});
const file = positionals[0];
if (file === undefined) throw new Error("usage: summarize-alloc-profile.ts FILE [--top N] [--per N]");
const top = Number(values.top);
const per = Number(values.per);
const root = (JSON.parse(readFileSync(file, "utf8")) as { head: ProfileNode }).head;

const where = (n: ProfileNode) => {
  const url = n.callFrame.url.replace(/^file:\/\/.*\/(dist|node_modules)\//, "$1/");
  return `${n.callFrame.functionName || "(anonymous)"} ${url}:${n.callFrame.lineNumber + 1}`;
};
const self = new Map<string, number>();
const paths = new Map<string, number>();
let total = 0;
const walk = (n: ProfileNode, stack: readonly string[]) => {
  const here = [...stack, where(n)];
  if (n.selfSize > 0) {
    total += n.selfSize;
    self.set(here.at(-1)!, (self.get(here.at(-1)!) ?? 0) + n.selfSize);
    const path = here.slice(-4).join(" ← ".replace("←", "→"));
    paths.set(path, (paths.get(path) ?? 0) + n.selfSize);
  }
  for (const c of n.children) walk(c, here);
};
walk(root, []);
const kb = (b: number) => `${(b / per / 1024).toFixed(per === 1 ? 0 : 2)} KiB`;
console.log(`allocated (sampled) ${kb(total)}${per === 1 ? "" : " per unit"}\n\nby function (self):`);
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${((100 * v) / total).toFixed(1).padStart(5)} %  ${kb(v).padStart(12)}  ${k}`);
console.log("\nby call path (last 4 frames, outermost first):");
for (const [k, v] of [...paths].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${((100 * v) / total).toFixed(1).padStart(5)} %  ${kb(v).padStart(12)}  ${k}`);
