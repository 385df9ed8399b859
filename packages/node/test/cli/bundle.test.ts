// `pair` from its bundle (dist/pair.mjs, built by scripts/build-cli.mjs): a fresh bundle runs and
// serves the dashboard and a chat request (files found relative to a source file are found from the
// bundle); a bundle whose sources changed, went away or lost its inputs list is not used — bin/pair.js
// runs the sources through tsx instead. The stale case runs a copy of bin/ in a scratch tree whose
// bundle is a one-line stand-in, so nothing here touches the repository's own sources.
import { execFileSync, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startEngineEmulator } from "@pair/emulators";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { whyNotFresh } from "../../../../bin/bundle-freshness.js";
import { PAIR_VERSION } from "../../src/node.js";
import { ServeChild } from "../support/serve-child.js";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const BUILD = join(root, "scripts", "build-cli.mjs");

function build(args: readonly string[] = []): void {
  execFileSync(process.execPath, [BUILD, ...args], { cwd: root, stdio: "pipe", timeout: 60_000 });
}

/** The files of the real bundle: dist/pair.mjs and its chunks, as its inputs list names them. */
function bundleFiles(): string[] {
  const list = JSON.parse(readFileSync(join(root, "dist", "pair.inputs.json"), "utf8")) as {
    outputs: string[];
  };
  return list.outputs;
}

function runPair(
  bin: string,
  args: readonly string[],
): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [bin, ...args], {
    cwd: root,
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, PAIR_SHOW_RUNTIME: "1" },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("the real bundle, dist/pair.mjs", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "pair-bundle-"));
    build(); // atomic (temp file + rename): `pair` children of other tests see the old or the new one
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is fresh right after `npm run build`, and `pair --version` runs it", () => {
    const bundle = join(root, "dist", "pair.mjs");
    expect(whyNotFresh(bundle)).toBeUndefined();
    const r = runPair(join(root, "bin", "pair.js"), ["--version"]);
    expect(r.stdout).toBe(`pair ${PAIR_VERSION}\n`);
    expect(r.stderr).toBe(`pair: running ${bundle}\n`);
    expect(r.status).toBe(0);
  });

  it("is ASCII only (V8 keeps it as a one-byte string), and text outside ASCII still prints as written", () => {
    for (const file of bundleFiles()) {
      const bytes = readFileSync(join(root, "dist", file));
      expect(
        bytes.findIndex((b) => b > 0x7f),
        file,
      ).toBe(-1);
    }
    // The usage text holds "→" (U+2192), escaped in the bundle.
    const r = runPair(join(root, "bin", "pair.js"), ["--help"]);
    expect(r.stdout).toMatch(/models, ls, list +the merged inventory: model \u2192 nodes serving it/);
  });

  it("leaves `pair demo`'s sandbox and the emulators to a chunk that only `pair demo` loads", () => {
    const text = (file: string): string => readFileSync(join(root, "dist", file), "utf8");
    const atStart = new Set(["pair.mjs"]);
    for (const file of atStart)
      for (const m of text(file).matchAll(/\bfrom\s*"\.\/([^"]+\.mjs)"/g)) atStart.add(m[1]!);
    const later = bundleFiles().filter((f) => !atStart.has(f));
    expect(later.length).toBeGreaterThan(0);
    for (const file of atStart) expect(text(file), file).not.toContain("startHuggingFaceEmulator");
    expect(later.some((f) => text(f).includes("startHuggingFaceEmulator"))).toBe(true);
  });

  it("`pair serve` from it serves the dashboard's files and a chat request", async () => {
    const engine = await startEngineEmulator({
      api: "ollama",
      name: "bundle-ollama",
      models: [{ name: "qwen:0.5b", maxTokens: 4 }],
    });
    const child = await ServeChild.create({
      name: "bundled",
      dir,
      engineUrl: engine.url,
      env: { PAIR_SHOW_RUNTIME: "1" },
    });
    try {
      await child.start();
      expect(child.output).toContain(`pair: running ${join(root, "dist", "pair.mjs")}`);

      // The dashboard's dist/ is found from the bundle (ui-static.ts resolves it from its own URL).
      const index = join(root, "packages", "dashboard", "dist", "index.html");
      expect(existsSync(index), "packages/dashboard/dist is built by `npm run build`").toBe(true);
      const code = await child.admin("/pair/v1/ui/login-code", {});
      const login = await fetch(`${child.url}${(code.json as { path: string }).path}`, {
        redirect: "manual",
      });
      expect(login.status).toBe(303);
      const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
      const ui = await fetch(`${child.url}/ui/`, { headers: { cookie } });
      expect(ui.status).toBe(200);
      expect(await ui.text()).toBe(readFileSync(index, "utf8"));

      const res = await fetch(`${child.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "qwen:0.5b",
          stream: true,
          messages: [{ role: "user", content: "hi" }],
        }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-pair-served-by")).toBe("bundled");
      const text = await res.text();
      expect(text).toMatch(/^data: \{/);
      expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);

      // The workload history (better-sqlite3, resolved from the source's URL in the bundle) recorded it.
      const history = await child.admin("/pair/v1/history?limit=5");
      expect(history.status).toBe(200);
      expect(JSON.stringify(history.json)).toContain("qwen:0.5b");
    } finally {
      await child.kill();
      await engine.close();
    }
  });
});

describe("a stale bundle is not used", () => {
  // scratch/bin/{pair.js,bundle-freshness.js} (copies), scratch/dist/pair.mjs (a stand-in built from
  // scratch/src/main.ts), scratch/packages and scratch/node_modules (links to the real ones, so the
  // fallback runs the real sources through the real tsx).
  let scratch: string;
  let bin: string;
  let source: string;
  let bundle: string;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "pair-stale-bundle-"));
    mkdirSync(join(scratch, "bin"));
    mkdirSync(join(scratch, "src"));
    for (const f of ["pair.js", "bundle-freshness.js"])
      copyFileSync(join(root, "bin", f), join(scratch, "bin", f));
    symlinkSync(join(root, "packages"), join(scratch, "packages"));
    symlinkSync(join(root, "node_modules"), join(scratch, "node_modules"));
    writeFileSync(join(scratch, "src", "helper.ts"), 'export const WHO: string = "the stand-in bundle";\n');
    source = join(scratch, "src", "main.ts");
    writeFileSync(
      source,
      [
        'import { WHO } from "./helper.ts";',
        "export async function main(): Promise<number> {",
        "  console.log(`${WHO} at ${import.meta.url}`);",
        "  return 7;",
        "}",
      ].join("\n"),
    );
    bundle = join(scratch, "dist", "pair.mjs");
    build(["--entry", source, "--outfile", bundle]);
    bin = join(scratch, "bin", "pair.js");
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("runs while fresh, and in it import.meta.url is the source file's URL", () => {
    expect(whyNotFresh(bundle)).toBeUndefined();
    const r = runPair(bin, ["--version"]);
    expect(r.stdout).toBe(`the stand-in bundle at file://${source}\n`);
    expect(r.status).toBe(7);
  });

  it("is not used once a source it was built from changes: the sources run through tsx", () => {
    const helper = join(scratch, "src", "helper.ts");
    const later = new Date(Date.now() + 5_000);
    utimesSync(helper, later, later); // same content, newer mtime: a save in an editor
    expect(whyNotFresh(bundle)).toBe(`${helper} changed since the build`);
    const r = runPair(bin, ["--version"]);
    expect(r.stdout).toBe(`pair ${PAIR_VERSION}\n`);
    expect(r.stderr).toBe(`pair: running the sources through tsx: ${helper} changed since the build\n`);
    expect(r.status).toBe(0);
  });

  it("is not used when a source is gone, or without its inputs list", () => {
    const earlier = new Date(Date.now() - 60_000);
    utimesSync(join(scratch, "src", "helper.ts"), earlier, earlier); // older than the next build
    build(["--entry", source, "--outfile", bundle]);
    expect(whyNotFresh(bundle)).toBeUndefined();
    rmSync(join(scratch, "src", "helper.ts"));
    expect(whyNotFresh(bundle)).toMatch(/helper\.ts is gone since the build$/);
    rmSync(join(scratch, "dist", "pair.inputs.json"));
    expect(whyNotFresh(bundle)).toMatch(/pair\.mjs or its inputs list is missing \(npm run build\)$/);
    const r = runPair(bin, ["--version"]);
    expect(r.stdout).toBe(`pair ${PAIR_VERSION}\n`);
    expect(r.stderr).toMatch(/^pair: running the sources through tsx: .*inputs list is missing/);
  });
});
