/**
 * The folder graph of a package's sources, and its cycles: folder A depends on folder B when a file
 * directly in or under A imports (statically, dynamically or as a type) a file under B. The files at
 * the root of `src/` form the folder "." (the composition root), but for the package's index. A cycle between folders means
 * neither can be read without the other, so the folder list stops telling the architecture.
 * eslint.config.js turns this into the lint rule `pair/no-folder-cycle`; run alone, it prints the graph's cycles:
 *
 *   node scripts/folder-cycles.mjs [packages/node/src]    # exit 1 when a cycle exists
 *
 * Must not know: which folders exist or what they hold.
 */

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

/**
 * The folder (first path segment under `root`, or ".") a file belongs to. The root's `index.ts` is
 * the package's surface, which re-exports from every folder and is imported only from outside: it
 * stands alone as "index.ts", so a folder importing it shows as a cycle.
 */
export function folderOf(root, file) {
  const parts = relative(root, file).split(sep);
  if (parts.length === 1 && /^index\.tsx?$/.test(parts[0])) return "index.ts";
  return parts.length > 1 ? parts[0] : ".";
}

/** The relative specifiers a source text imports or re-exports. */
export function importsOf(text) {
  return [...text.matchAll(IMPORT)].map((m) => m[1]);
}

/**
 * `Map<folder, Map<folder, example>>`: each folder's dependencies on other folders, with one
 * importing file and specifier as the example (for the message).
 */
export function folderGraph(root) {
  const graph = new Map();
  for (const file of sourceFiles(root)) {
    const from = folderOf(root, file);
    if (!graph.has(from)) graph.set(from, new Map());
    for (const spec of importsOf(readFileSync(file, "utf8"))) {
      const target = resolve(dirname(file), spec);
      if (relative(root, target).startsWith("..")) continue;
      const to = folderOf(root, target);
      if (to !== from && !graph.get(from).has(to))
        graph.get(from).set(to, `${relative(root, file)} imports ${spec}`);
    }
  }
  return graph;
}

/** The folders from `to` to `from` in `graph` (so an edge from → to closes a cycle), or undefined. */
export function pathBetween(graph, to, from, seen = new Set()) {
  if (to === from) return [to];
  if (seen.has(to)) return undefined;
  seen.add(to);
  for (const next of graph.get(to)?.keys() ?? []) {
    const rest = pathBetween(graph, next, from, seen);
    if (rest !== undefined) return [to, ...rest];
  }
  return undefined;
}

/** The strongly connected groups of more than one folder (Tarjan), each sorted, largest first. */
export function cycleGroups(graph) {
  let index = 0;
  const stack = [];
  const info = new Map();
  const groups = [];
  const visit = (v) => {
    info.set(v, { index, low: index, onStack: true });
    index += 1;
    stack.push(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!info.has(w)) {
        visit(w);
        info.get(v).low = Math.min(info.get(v).low, info.get(w).low);
      } else if (info.get(w).onStack) info.get(v).low = Math.min(info.get(v).low, info.get(w).index);
    }
    if (info.get(v).low === info.get(v).index) {
      const group = [];
      let w;
      do {
        w = stack.pop();
        info.get(w).onStack = false;
        group.push(w);
      } while (w !== v);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!info.has(v)) visit(v);
  return groups.sort((a, b) => b.length - a.length);
}

/** The pairs of folders that import each other directly (the simplest cycles). */
export function mutualPairs(graph) {
  const pairs = [];
  for (const [a, deps] of graph)
    for (const b of deps.keys()) if (a < b && graph.get(b)?.has(a)) pairs.push([a, b]);
  return pairs;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? "packages/node/src");
  const graph = folderGraph(root);
  const groups = cycleGroups(graph);
  const pairs = mutualPairs(graph);
  for (const [a, b] of pairs) console.log(`${a} <-> ${b}: ${graph.get(a).get(b)}; ${graph.get(b).get(a)}`);
  for (const g of groups) console.log(`cycle group: ${g.join(", ")}`);
  console.log(
    `folder-cycles: ${graph.size} folders, ${pairs.length} mutual pairs, ${groups.length} cycle groups`,
  );
  if (groups.length > 0) process.exitCode = 1;
}
