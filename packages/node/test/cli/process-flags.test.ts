// `pair` runs with PAIR_NODE_ENV and PAIR_NODE_FLAGS: bin/pair.js passes exactly those on its `#!`
// line (the benchmarks start their nodes with the same), node accepts them, and the environment
// reaches the process that `#!` line starts.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { PAIR_NODE_ENV, PAIR_NODE_FLAGS } from "../../src/process-flags.js";

const PAIR_BIN = fileURLToPath(new URL("../../../../bin/pair.js", import.meta.url));

function expectedShebang(): string {
  const env = Object.entries(PAIR_NODE_ENV).map(([k, v]) => `${k}=${v}`);
  const words = [...env, "node", ...PAIR_NODE_FLAGS];
  return words.length === 1 ? "#!/usr/bin/env node" : `#!/usr/bin/env -S ${words.join(" ")}`;
}

it("bin/pair.js starts node with PAIR_NODE_ENV and PAIR_NODE_FLAGS, which node accepts", () => {
  const shebang = readFileSync(PAIR_BIN, "utf8").split("\n")[0];
  expect(shebang).toBe(expectedShebang());
  expect(
    execFileSync(process.execPath, [...PAIR_NODE_FLAGS, "-e", "console.log('ok')"], { encoding: "utf8" }),
  ).toBe("ok\n");
});

it("the #! line's environment and flags reach the process it starts", () => {
  // A script with bin/pair.js's first line, run as an executable (as npx and a shell run `pair`),
  // with node found on PATH as the #! line finds it.
  const dir = mkdtempSync(join(tmpdir(), "pair-shebang-"));
  try {
    const script = join(dir, "probe.mjs");
    writeFileSync(
      script,
      `${expectedShebang()}\nconsole.log(JSON.stringify({ env: process.env, gc: typeof globalThis.gc, argv: process.execArgv }));\n`,
      { mode: 0o755 },
    );
    symlinkSync(process.execPath, join(dir, "node"));
    const seen = JSON.parse(
      execFileSync(script, { encoding: "utf8", env: { PATH: `${dir}:/usr/bin:/bin` } }),
    ) as { env: Record<string, string>; gc: string; argv: string[] };
    for (const [k, v] of Object.entries(PAIR_NODE_ENV)) expect(seen.env[k]).toBe(v);
    expect(seen.argv).toEqual([...PAIR_NODE_FLAGS]);
    expect(seen.gc).toBe("function");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
