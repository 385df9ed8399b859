/**
 * Reads a V8 .cpuprofile (as `--profile-node DIR` of proxy-overhead.ts writes for the node child)
 * and prints where the CPU went: self time per source file (our packages, undici, node internals,
 * native/GC) and the top functions by self time.
 *
 *   npx tsx bench/summarize-cpu-profile.ts FILE.cpuprofile [--top 30] [--callers NAME [--depth 8]]
 *
 * --callers NAME: the heaviest call paths (--depth frames up, default 8) into functions named NAME, by self time.
 *
 * Must not know: the benchmark that produced the profile.
 */

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    top: { type: "string", default: "30" },
    callers: { type: "string" },
    depth: { type: "string", default: "8" },
  },
});
const file = positionals[0];
if (file === undefined) throw new Error("usage: summarize-cpu-profile.ts FILE.cpuprofile [--top N]");
const top = Number(values.top);
const depth = Number(values.depth);
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

function place(url: string): string {
  if (url === "") return "(native, GC, idle, program)";
  const m = url.match(/\/(packages\/[^/]+\/src\/.*)$/);
  if (m) return m[1]!;
  const dep = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (dep) return `node_modules/${dep[1]!}`;
  if (url.startsWith("node:")) return url;
  return url.replace(/^file:\/\//, "");
}

const perPlace = new Map<string, number>();
const perFunction = new Map<string, number>();
let total = 0;
for (const [id, us] of selfUs) {
  const node = byId.get(id);
  if (!node) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  if (functionName === "(idle)") continue;
  total += us;
  const where = place(url);
  perPlace.set(where, (perPlace.get(where) ?? 0) + us);
  const key = `${functionName || "(anonymous)"}  ${where}:${lineNumber + 1}`;
  perFunction.set(key, (perFunction.get(key) ?? 0) + us);
}

const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)} %`;
const wallS = (profile.endTime - profile.startTime) / 1e6;
console.log(`${file}: ${(total / 1e6).toFixed(2)} s busy of ${wallS.toFixed(1)} s profiled\n`);
console.log("Self time by place:");
for (const [where, us] of [...perPlace].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`  ${pct(us)}  ${where}`);
console.log("\nTop functions by self time:");
for (const [fn, us] of [...perFunction].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`  ${pct(us)}  ${fn}`);

// Inclusive time of our own functions (each sample counted once per function on its stack).
const ours = new Map<string, number>();
for (const [id, us] of selfUs) {
  if (byId.get(id)?.callFrame.functionName === "(idle)") continue;
  const seen = new Set<string>();
  for (let p: number | undefined = id; p !== undefined; p = parentOf.get(p)) {
    const f = byId.get(p)!.callFrame;
    const where = place(f.url);
    if (!where.startsWith("packages/")) continue;
    const key = `${f.functionName || "(anonymous)"}  ${where}`;
    if (seen.has(key)) continue;
    seen.add(key);
    ours.set(key, (ours.get(key) ?? 0) + us);
  }
}
console.log("\nOur functions by inclusive time (synchronous parts; async functions count per resumption):");
for (const [fn, us] of [...ours].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`  ${pct(us)}  ${fn}`);

if (values.callers !== undefined) {
  const paths = new Map<string, number>();
  let all = 0;
  for (const [id, us] of selfUs) {
    if (byId.get(id)?.callFrame.functionName !== values.callers) continue;
    all += us;
    const frames: string[] = [];
    for (let p = parentOf.get(id); p !== undefined && frames.length < depth; p = parentOf.get(p)) {
      const f = byId.get(p)!.callFrame;
      frames.push(`${f.functionName || "(anonymous)"} ${place(f.url)}:${f.lineNumber + 1}`);
    }
    const key = frames.join("\n      ← ");
    paths.set(key, (paths.get(key) ?? 0) + us);
  }
  console.log(`\nCallers of ${values.callers} (${pct(all).trim()} of busy time):`);
  for (const [path, us] of [...paths].sort((a, b) => b[1] - a[1]).slice(0, 8))
    console.log(`  ${pct(us)}  ← ${path}`);
}
