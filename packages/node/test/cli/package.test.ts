// The package a user installs (scripts/pack.mjs): its tarball holds the bundle, the built dashboard
// and a `pair` bin that runs the bundle with bin/pair.js's #! line, nothing else; it depends on
// exactly the modules the bundle imports from node_modules, at the workspace's versions. Installing
// it and running it is scripts/check-package.sh (CI, on Node 22, 24 and 26).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const readJson = (path: string): Record<string, unknown> =>
  JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)));
}

/** The files of the bundle: dist/pair.mjs and its chunks, as its inputs list names them. */
function bundleFiles(): string[] {
  return readJson(join(root, "dist", "pair.inputs.json"))["outputs"] as string[];
}

/** The bare specifiers the bundle's files import or require: what it leaves in node_modules. */
function bundleImports(): string[] {
  const text = bundleFiles()
    .map((f) => readFileSync(join(root, "dist", f), "utf8"))
    .join("\n");
  const found = new Set<string>();
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)"(@?[\w-][\w./@-]*)"/g)) {
    const name = m[1]!;
    if (name.startsWith("node:") || builtinModules.includes(name)) continue;
    found.add(name.startsWith("@") ? name.split("/").slice(0, 2).join("/") : name.split("/")[0]!);
  }
  return [...found].sort();
}

describe("the package a user installs", () => {
  let out: string;
  let tarball: string;
  beforeAll(() => {
    // npm ci built dist/pair.mjs; bundle.test.ts rebuilds it atomically, so it stays fresh.
    out = mkdtempSync(join(tmpdir(), "pair-pack-"));
    tarball = execFileSync(process.execPath, [join(root, "scripts", "pack.mjs"), "--out-dir", out], {
      cwd: root,
      encoding: "utf8",
      timeout: 60_000,
    }).trim();
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it("holds the bundle and its chunks, the built dashboard, the bin and its README, nothing else", () => {
    const listed = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" })
      .trim()
      .split("\n")
      .map((p) => p.replace(/^package\//, ""))
      .sort();
    const ui = filesUnder(join(root, "packages", "dashboard", "dist")).map(
      (f) => `packages/dashboard/dist/${f}`,
    );
    expect(ui).toContain("packages/dashboard/dist/index.html");
    const bundle = bundleFiles().map((f) => `dist/${f}`);
    expect(bundle).toContain("dist/pair.mjs");
    expect(bundle.length).toBeGreaterThan(1); // `pair demo`'s chunk at least
    expect(listed).toEqual(["README.md", "bin/pair.js", ...bundle, "package.json", ...ui].sort());
  });

  it("depends on what the bundle imports from node_modules, at the workspace's versions", () => {
    const manifest = readJson(join(out, "package", "package.json"));
    const top = readJson(join(root, "package.json"));
    const node = readJson(join(root, "packages", "node", "package.json"));
    expect(manifest).toMatchObject({
      name: "pair-cluster",
      version: top["version"],
      engines: top["engines"],
    });
    expect(manifest["private"]).toBeUndefined();
    expect(top["private"]).toBe(true);
    const deps = manifest["dependencies"] as Record<string, string>;
    expect(Object.keys(deps).sort()).toEqual(bundleImports());
    const pinned = node["dependencies"] as Record<string, string>;
    for (const [name, version] of Object.entries(deps)) expect(version).toBe(pinned[name]);
  });

  it("runs the bundle with bin/pair.js's #! line, never the sources through tsx", () => {
    const bin = readFileSync(join(out, "package", "bin", "pair.js"), "utf8");
    const [shebang, ...body] = bin.split("\n");
    expect(shebang).toBe(readFileSync(join(root, "bin", "pair.js"), "utf8").split("\n")[0]);
    expect(body.join("\n")).toContain('await import("../dist/pair.mjs")');
    expect(bin).not.toMatch(/tsx|\.ts"/);
  });
});
