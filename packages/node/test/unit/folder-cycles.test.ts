// The folder-cycle checker behind the lint rule pair/no-folder-cycle (scripts/folder-cycles.mjs):
// it finds a cycle through any kind of import, a type-only one included, and the daemon has none.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cycleGroups, folderGraph, mutualPairs, pathBetween } from "../../../../scripts/folder-cycles.mjs";

const tmp = mkdtempSync(join(tmpdir(), "pair-folder-cycles-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmp, "src-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("folder cycles", () => {
  it("finds a cycle closed by a type-only import, through a third folder", () => {
    const root = tree({
      "a/one.ts": 'import { b } from "../b/two.js";\nexport const a = b;\n',
      "b/two.ts": 'export { c as b } from "../c/three.js";\n',
      "c/three.ts": 'import type { A } from "../a/types.js";\nexport const c = 1 as A;\n',
      "a/types.ts": "export type A = number;\n",
      "main.ts": 'import { a } from "./a/one.js";\nvoid import("./c/three.js");\n',
      "index.ts": 'export { a } from "./a/one.js";\n',
    });
    const graph = folderGraph(root);
    expect(cycleGroups(graph)).toEqual([["a", "b", "c"]]);
    expect(mutualPairs(graph)).toEqual([]);
    expect(pathBetween(graph, "b", "a")).toEqual(["b", "c", "a"]);
    expect([...graph.get(".")!.keys()].sort()).toEqual(["a", "c"]);
    expect(graph.get("index.ts")!.has("a")).toBe(true);
  });

  it("sees no cycle where the imports only go down", () => {
    const root = tree({
      "a/one.ts": 'import { b } from "../b/two.js";\nexport const a = b;\n',
      "b/two.ts": "export const b = 2;\n",
    });
    expect(cycleGroups(folderGraph(root))).toEqual([]);
  });

  it("the daemon's, the demo's, the cluster's, the dialects' and the sponsor's folders have none", () => {
    for (const pkg of ["node", "demo", "cluster", "dialects", "sponsor"]) {
      const root = fileURLToPath(new URL(`../../../${pkg}/src`, import.meta.url));
      expect(cycleGroups(folderGraph(root)), pkg).toEqual([]);
    }
  });
});
