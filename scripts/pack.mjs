/**
 * Makes the package a user installs, `pair-cluster` (`npm install -g pair-cluster`, then `pair`), from
 * the build's outputs: the bundled CLI (dist/pair.mjs and the chunks its inputs list names) and the built dashboard
 * (packages/dashboard/dist), with a `pair` bin that runs the bundle directly, so neither tsx nor vite
 * nor esbuild is there at run time. Its only dependencies are the modules the bundle leaves in
 * node_modules (EXTERNAL_MODULES: native addons), at the versions the workspace pins.
 *
 *   npm run build && node scripts/pack.mjs     # prints the tarball's path: dist/pair-cluster-VERSION.tgz
 *   node scripts/pack.mjs --out-dir DIR        # the tarball (and the tree it packs) in DIR instead
 *
 * The tree is assembled in dist/package/ (DIR/package/) with the repository's layout (dist/pair.mjs beside
 * packages/dashboard/dist/), because the bundle finds the dashboard and better-sqlite3 relative to
 * its sources' paths (scripts/build-cli.mjs). The repository's own package stays private.
 * Must not know: what the CLI does.
 */

import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { whyNotFresh } from "../bin/bundle-freshness.js";
import { EXTERNAL_MODULES, inputsPathOf } from "./build-cli.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The npm name (`pair` belongs to an unrelated library). */
export const PACKAGE_NAME = "pair-cluster";

const readJson = (path) => JSON.parse(readFileSync(path, "utf8"));

/** The package's package.json, from the root's (version, engines, licence) and the pinned externals. */
export function packageManifest(root = ROOT) {
  const top = readJson(join(root, "package.json"));
  const node = readJson(join(root, "packages", "node", "package.json"));
  const dependencies = {};
  for (const name of EXTERNAL_MODULES) {
    const version = node.dependencies?.[name];
    if (version === undefined)
      throw new Error(`pack: ${name} is external but not a dependency of packages/node`);
    dependencies[name] = version;
  }
  return {
    name: PACKAGE_NAME,
    version: top.version,
    description: top.description,
    license: top.license,
    type: "module",
    engines: top.engines,
    bin: { pair: "bin/pair.js" },
    files: ["bin/", "dist/", "packages/dashboard/dist/"],
    dependencies,
  };
}

/**
 * The installed `pair`: bin/pair.js's `#!` line (its V8 flags and environment, process-flags.ts),
 * then the bundle, with no freshness check and no tsx fallback (an installed package has no sources).
 */
export function installedBin(root = ROOT) {
  const shebang = readFileSync(join(root, "bin", "pair.js"), "utf8").split("\n")[0];
  return [
    shebang,
    "// The installed `pair` command (made by scripts/pack.mjs): runs the bundled CLI with plain node.",
    'const { main } = await import("../dist/pair.mjs");',
    "process.exitCode = await main(process.argv.slice(2));",
    "",
  ].join("\n");
}

/** The files a bundle is made of: the entry and its chunks, as its inputs list names them. */
export function bundleOutputs(bundle) {
  const { outputs } = readJson(inputsPathOf(bundle));
  if (!Array.isArray(outputs) || !outputs.includes(basename(bundle)))
    throw new Error(`pack: ${inputsPathOf(bundle)} names no outputs: run npm run build`);
  return outputs;
}

/** Assembles `outDir`/package/ and packs it into `outDir`; returns the tarball's absolute path. */
export function pack({ root = ROOT, outDir = join(root, "dist") } = {}) {
  const bundle = join(root, "dist", "pair.mjs");
  const stale = whyNotFresh(bundle);
  if (stale !== undefined) throw new Error(`pack: the bundle is not fresh (${stale}): run npm run build`);
  const ui = join(root, "packages", "dashboard", "dist");
  if (!existsSync(join(ui, "index.html"))) throw new Error(`pack: ${ui} is not built: run npm run build`);

  const tree = join(outDir, "package");
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(join(tree, "bin"), { recursive: true });
  mkdirSync(join(tree, "dist"));
  const manifest = packageManifest(root);
  writeFileSync(join(tree, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
  writeFileSync(join(tree, "bin", "pair.js"), installedBin(root), { mode: 0o755 });
  for (const output of bundleOutputs(bundle))
    cpSync(join(dirname(bundle), output), join(tree, "dist", output));
  cpSync(ui, join(tree, "packages", "dashboard", "dist"), { recursive: true });
  cpSync(join(root, "README.md"), join(tree, "README.md"));

  const out = execFileSync("npm", ["pack", "--json", "--pack-destination", outDir], {
    cwd: tree,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [{ filename }] = JSON.parse(out);
  return join(outDir, filename);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { "out-dir": { type: "string" } }, strict: true });
  try {
    console.log(pack(values["out-dir"] === undefined ? {} : { outDir: resolve(values["out-dir"]) }));
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  }
}
