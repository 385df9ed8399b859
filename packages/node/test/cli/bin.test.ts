// The real `bin/pair.js` end to end, in a child process: tsx loads the sources, exit statuses and
// signals reach the process, and `pair demo` cleans up after SIGINT.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { PAIR_VERSION } from "../../src/node.js";
import type { DemoJson } from "@pair/demo";
import { portClosed } from "./cli-harness.js";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const bin = join(root, "bin", "pair.js");

it("bin/pair.js prints its version, runs the basic demo, and stops it on SIGINT", async () => {
  const version = spawnSync(process.execPath, [bin, "--version"], {
    cwd: root,
    encoding: "utf8",
    timeout: 10_000,
  });
  expect(version.status).toBe(0);
  expect(version.stdout).toBe(`pair ${PAIR_VERSION}\n`);

  const child = spawn(process.execPath, [bin, "demo", "--basic", "--json"], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  try {
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal })),
    );
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (t: string) => (stderr += t));
    const line = await new Promise<string>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(
        () => reject(new Error(`no JSON line within 10 s; stderr:\n${stderr}`)),
        10_000,
      );
      child.stdout.setEncoding("utf8").on("data", (t: string) => {
        out += t;
        if (out.includes("\n")) {
          clearTimeout(timer);
          resolve(out.slice(0, out.indexOf("\n")));
        }
      });
      void exited.then(() => reject(new Error(`exited early; stderr:\n${stderr}`)));
    });
    const info = JSON.parse(line) as DemoJson;
    const models = (await (await fetch(`${info.url}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual(info.models);

    child.kill("SIGINT");
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(stderr).toMatch(/SIGINT: stopping the demo/);
    for (const url of [info.url, ...info.engines.map((e) => e.base_url)])
      expect(await portClosed(Number(new URL(url).port))).toBe(true);
    expect(existsSync(dirname(info.config_file))).toBe(false);
  } finally {
    child.kill("SIGKILL"); // only if a check failed before it exited
  }
});
