/**
 * Where the config file and the data dir live when nothing names them, by each platform's own
 * convention: XDG on Linux (`$XDG_CONFIG_HOME/pair/pair.yaml`, `$XDG_DATA_HOME/pair`), Application
 * Support on macOS, `%APPDATA%` and `%LOCALAPPDATA%` on Windows. A node that already keeps its
 * files at the first release's Linux paths (`~/.config/pair/pair.yaml`, `~/.local/share/pair`) keeps
 * them there when the platform's place holds nothing yet, so moving to the convention never loses a
 * node's identity, pins or history.
 * Must not know: YAML, what is in the files. `exists` is the only look at the file system.
 */

import { isAbsolute, join, posix, win32 } from "node:path";

export interface PlatformFacts {
  readonly platform: NodeJS.Platform;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homeDir: string;
  /** Whether a file or folder is there (the legacy paths are used only when they are). */
  readonly exists: (path: string) => boolean;
}

export interface PlatformPaths {
  readonly configFile: string;
  readonly dataDir: string;
}

/** The first release's paths, on every platform (relative to the home dir). */
export const LEGACY_CONFIG_FILE = [".config", "pair", "pair.yaml"] as const;
export const LEGACY_DATA_DIR = [".local", "share", "pair"] as const;

/** An environment variable that names an absolute folder, or undefined (XDG says to ignore others). */
function absoluteDir(
  env: PlatformFacts["env"],
  name: string,
  isAbs: (p: string) => boolean,
): string | undefined {
  const value = env[name];
  return value !== undefined && value !== "" && isAbs(value) ? value : undefined;
}

/** The platform's own places, before the legacy fallback. */
function conventional(facts: PlatformFacts): PlatformPaths {
  const { env, homeDir } = facts;
  switch (facts.platform) {
    case "darwin": {
      const base = posix.join(homeDir, "Library", "Application Support", "pair");
      return { configFile: posix.join(base, "pair.yaml"), dataDir: posix.join(base, "data") };
    }
    case "win32": {
      const roaming =
        absoluteDir(env, "APPDATA", (p) => win32.isAbsolute(p)) ?? win32.join(homeDir, "AppData", "Roaming");
      const local =
        absoluteDir(env, "LOCALAPPDATA", (p) => win32.isAbsolute(p)) ??
        win32.join(homeDir, "AppData", "Local");
      return { configFile: win32.join(roaming, "pair", "pair.yaml"), dataDir: win32.join(local, "pair") };
    }
    default: {
      const config = absoluteDir(env, "XDG_CONFIG_HOME", isAbsolute) ?? join(homeDir, ".config");
      const data = absoluteDir(env, "XDG_DATA_HOME", isAbsolute) ?? join(homeDir, ".local", "share");
      return { configFile: join(config, "pair", "pair.yaml"), dataDir: join(data, "pair") };
    }
  }
}

/** The default config file and data dir for this user on this platform. */
export function platformPaths(facts: PlatformFacts): PlatformPaths {
  const own = conventional(facts);
  const pathOf = (...parts: string[]) => (facts.platform === "win32" ? win32.join(...parts) : join(...parts));
  const legacyConfig = pathOf(facts.homeDir, ...LEGACY_CONFIG_FILE);
  const legacyData = pathOf(facts.homeDir, ...LEGACY_DATA_DIR);
  return {
    configFile:
      own.configFile !== legacyConfig && !facts.exists(own.configFile) && facts.exists(legacyConfig)
        ? legacyConfig
        : own.configFile,
    dataDir:
      own.dataDir !== legacyData && !facts.exists(own.dataDir) && facts.exists(legacyData)
        ? legacyData
        : own.dataDir,
  };
}
