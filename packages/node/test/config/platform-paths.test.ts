// Where the default config file and data dir live on each platform, and the first release's Linux
// paths kept while the platform's place holds nothing.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { loadConfig, platformPaths } from "../../src/config/index.js";

const none = () => false;

describe("each platform's convention", () => {
  test("Linux: XDG_CONFIG_HOME and XDG_DATA_HOME, else ~/.config and ~/.local/share", () => {
    const linux = { platform: "linux" as const, homeDir: "/home/ada", exists: none };
    expect(platformPaths({ ...linux, env: {} })).toEqual({
      configFile: "/home/ada/.config/pair/pair.yaml",
      dataDir: "/home/ada/.local/share/pair",
    });
    expect(platformPaths({ ...linux, env: { XDG_CONFIG_HOME: "/cfg", XDG_DATA_HOME: "/data" } })).toEqual({
      configFile: "/cfg/pair/pair.yaml",
      dataDir: "/data/pair",
    });
    // XDG: a relative or empty value is ignored.
    expect(platformPaths({ ...linux, env: { XDG_CONFIG_HOME: "rel", XDG_DATA_HOME: "" } })).toEqual({
      configFile: "/home/ada/.config/pair/pair.yaml",
      dataDir: "/home/ada/.local/share/pair",
    });
  });

  test("macOS: ~/Library/Application Support/pair", () => {
    expect(platformPaths({ platform: "darwin", env: {}, homeDir: "/Users/ada", exists: none })).toEqual({
      configFile: "/Users/ada/Library/Application Support/pair/pair.yaml",
      dataDir: "/Users/ada/Library/Application Support/pair/data",
    });
  });

  test("Windows: %APPDATA% for the config, %LOCALAPPDATA% for the data", () => {
    const env = { APPDATA: "C:\\Users\\ada\\AppData\\Roaming", LOCALAPPDATA: "D:\\Local" };
    expect(platformPaths({ platform: "win32", env, homeDir: "C:\\Users\\ada", exists: none })).toEqual({
      configFile: "C:\\Users\\ada\\AppData\\Roaming\\pair\\pair.yaml",
      dataDir: "D:\\Local\\pair",
    });
    expect(platformPaths({ platform: "win32", env: {}, homeDir: "C:\\Users\\ada", exists: none })).toEqual({
      configFile: "C:\\Users\\ada\\AppData\\Roaming\\pair\\pair.yaml",
      dataDir: "C:\\Users\\ada\\AppData\\Local\\pair",
    });
  });

  test("the old Linux paths are kept while only they exist", () => {
    const old = new Set(["/Users/ada/.config/pair/pair.yaml", "/Users/ada/.local/share/pair"]);
    const mac = { platform: "darwin" as const, env: {}, homeDir: "/Users/ada" };
    expect(platformPaths({ ...mac, exists: (p) => old.has(p) })).toEqual({
      configFile: "/Users/ada/.config/pair/pair.yaml",
      dataDir: "/Users/ada/.local/share/pair",
    });
    // Once the platform's place holds a file, it wins.
    const both = new Set([...old, "/Users/ada/Library/Application Support/pair/pair.yaml"]);
    expect(platformPaths({ ...mac, exists: (p) => both.has(p) }).configFile).toBe(
      "/Users/ada/Library/Application Support/pair/pair.yaml",
    );
  });
});

describe("loadConfig reads the platform's place", () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), "pair-paths-"));
  });
  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });
  const write = async (path: string, text: string) => {
    await mkdir(join(path, ".."), { recursive: true });
    await writeFile(path, text);
  };

  test("XDG_CONFIG_HOME's file, and XDG_DATA_HOME as the default data dir", async () => {
    const env = { XDG_CONFIG_HOME: join(home, "cfg"), XDG_DATA_HOME: join(home, "data") };
    await write(join(home, "cfg/pair/pair.yaml"), "node: { name: from-xdg }\n");
    const loaded = await loadConfig({ env, homeDir: home, hostName: "h", platform: "linux" });
    expect(loaded.file).toEqual({ path: join(home, "cfg/pair/pair.yaml"), via: "default" });
    expect(loaded.config.node.name).toBe("from-xdg");
    expect(loaded.config.node.dataDir).toBe(join(home, "data/pair"));
  });

  test("an existing ~/.config/pair/pair.yaml and data dir stay in use when XDG points elsewhere", async () => {
    const env = { XDG_CONFIG_HOME: join(home, "cfg"), XDG_DATA_HOME: join(home, "data") };
    await write(join(home, ".config/pair/pair.yaml"), "node: { name: from-old }\n");
    await mkdir(join(home, ".local/share/pair"), { recursive: true });
    const loaded = await loadConfig({ env, homeDir: home, hostName: "h", platform: "linux" });
    expect(loaded.config.node.name).toBe("from-old");
    expect(loaded.config.node.dataDir).toBe(join(home, ".local/share/pair"));
  });

  test("data_dir in the file wins over every default", async () => {
    await write(join(home, ".config/pair/pair.yaml"), `node: { data_dir: ${join(home, "mine")} }\n`);
    const loaded = await loadConfig({ env: {}, homeDir: home, hostName: "h", platform: "darwin" });
    expect(loaded.config.node.dataDir).toBe(join(home, "mine"));
  });
});
