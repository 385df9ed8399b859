// Which file is read (--config, else $PAIR_CONFIG, else the platform default: platform-paths.test.ts), and what a missing
// or unreadable file means.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { ConfigError, loadConfig, resolveConfigFile } from "../../src/config/index.js";

let home: string;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pair-config-"));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

async function writeConfig(relative: string, text: string): Promise<string> {
  const path = join(home, relative);
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, text);
  return path;
}

async function loadError(options: Parameters<typeof loadConfig>[0]): Promise<ConfigError> {
  const error: unknown = await loadConfig(options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

describe("resolution order", () => {
  test("--config wins over $PAIR_CONFIG, which wins over the default", () => {
    const env = { PAIR_CONFIG: "/etc/pair/env.yaml" };
    expect(resolveConfigFile({ file: "/tmp/flag.yaml", env, homeDir: "/home/ada" })).toEqual({
      path: "/tmp/flag.yaml",
      via: "--config",
    });
    expect(resolveConfigFile({ env, homeDir: "/home/ada" })).toEqual({
      path: "/etc/pair/env.yaml",
      via: "PAIR_CONFIG",
    });
    expect(resolveConfigFile({ env: {}, homeDir: "/home/ada" })).toEqual({
      path: "/home/ada/.config/pair/pair.yaml",
      via: "default",
    });
  });

  test("an empty $PAIR_CONFIG counts as unset; ~ is expanded in named files", () => {
    expect(resolveConfigFile({ env: { PAIR_CONFIG: "" }, homeDir: "/h" }).via).toBe("default");
    expect(resolveConfigFile({ env: { PAIR_CONFIG: "~/p.yaml" }, homeDir: "/h" }).path).toBe("/h/p.yaml");
    expect(resolveConfigFile({ file: "~/f.yaml", env: {}, homeDir: "/h" }).path).toBe("/h/f.yaml");
  });

  test("each source is actually read, in that order", async () => {
    await writeConfig(".config/pair/pair.yaml", "node: { name: from-default }\n");
    const fromEnv = await writeConfig("env.yaml", "node: { name: from-env }\n");
    const fromFlag = await writeConfig("flag.yaml", "node: { name: from-flag }\n");
    const base = { homeDir: home, hostName: "h" };
    const name = async (options: Parameters<typeof loadConfig>[0]): Promise<string> =>
      (await loadConfig(options)).config.node.name;
    expect(await name({ ...base, file: fromFlag, env: { PAIR_CONFIG: fromEnv } })).toBe("from-flag");
    expect(await name({ ...base, env: { PAIR_CONFIG: fromEnv } })).toBe("from-env");
    expect(await name({ ...base, env: {} })).toBe("from-default");
  });
});

describe("missing and unreadable files", () => {
  test("no default file: all defaults, and it says so", async () => {
    const loaded = await loadConfig({ env: {}, homeDir: home, hostName: "ada-laptop" });
    expect(loaded.found).toBe(false);
    expect(loaded.file).toEqual({ path: join(home, ".config/pair/pair.yaml"), via: "default" });
    expect(loaded.config.node.name).toBe("ada-laptop");
    expect(loaded.config.node.dataDir).toBe(join(home, ".local/share/pair"));
    expect(loaded.config.engines.map((e) => e.baseUrl)).toEqual(["http://127.0.0.1:11435"]);
  });

  test("a missing --config file is an error naming the path", async () => {
    const path = join(home, "nope.yaml");
    const error = await loadError({ file: path, env: {}, homeDir: home });
    expect(error.problems).toEqual([expect.objectContaining({ code: "file_not_found" })]);
    expect(error.message).toContain(path);
    expect(error.message).toContain("--config");
  });

  test("a missing $PAIR_CONFIG file is an error naming the path", async () => {
    const path = join(home, "gone.yaml");
    const error = await loadError({ env: { PAIR_CONFIG: path }, homeDir: home });
    expect(error.problems[0]?.code).toBe("file_not_found");
    expect(error.toString()).toContain(path);
    expect(error.toString()).toContain("$PAIR_CONFIG");
  });

  test("an empty --config is refused rather than ignored", async () => {
    expect((await loadError({ file: "", env: {}, homeDir: home })).problems[0]?.code).toBe("file_not_found");
  });

  test("a directory is not a config file", async () => {
    expect((await loadError({ file: home, env: {}, homeDir: home })).problems[0]?.code).toBe(
      "file_unreadable",
    );
  });

  test("a file over 1 MiB is refused", async () => {
    const path = await writeConfig("big.yaml", `# ${"x".repeat(1_048_576)}\n`);
    expect((await loadError({ file: path, env: {}, homeDir: home })).problems[0]?.code).toBe(
      "file_unreadable",
    );
  });

  test("an invalid file is refused with its path as the source", async () => {
    const path = await writeConfig("bad.yaml", "node:\n  lisen: x\n");
    const error = await loadError({ file: path, env: {}, homeDir: home });
    expect(error.source).toBe(path);
    expect(error.toString()).toBe(
      `${path}:2:3: node.lisen: unknown_key: unknown key; did you mean "listen"?`,
    );
  });

  test("an existing default file that is invalid is not silently replaced by defaults", async () => {
    await writeConfig(".config/pair/pair.yaml", "engines: nope\n");
    const error = await loadError({ env: {}, homeDir: home });
    expect(error.problems[0]).toMatchObject({ path: "engines", code: "invalid_type" });
  });
});
