/**
 * Which config file a command reads (`--config FILE`, else `$PAIR_CONFIG`, else
 * `~/.config/pair/pair.yaml`) and reading it. A missing default file means "all defaults"; a missing
 * file that was named explicitly is an error naming the path. The file system edge of config.
 * Must not know: what the keys mean (parse-config.ts does), the credential store, sockets.
 */

import { readFile, stat } from "node:fs/promises";
import { ConfigError } from "./config-error.js";
import type { PairConfig } from "./config-types.js";
import { DEFAULT_CONFIG_FILE, MAX_CONFIG_FILE_BYTES } from "./defaults.js";
import { expandHome } from "./home-path.js";
import { parseConfig } from "./parse-config.js";
import { systemHost } from "./system-host.js";

export const CONFIG_ENV_VAR = "PAIR_CONFIG";

export type ConfigFileVia = "--config" | "PAIR_CONFIG" | "default";

export interface ConfigFileChoice {
  readonly path: string;
  /** What named it, for messages and `pair status`. */
  readonly via: ConfigFileVia;
}

export interface LoadConfigOptions {
  /** `--config FILE`. */
  readonly file?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homeDir: string;
  /** Default `node.name`; this machine's host name when not given. */
  readonly hostName?: string | undefined;
}

export interface LoadedConfig {
  readonly config: PairConfig;
  readonly file: ConfigFileChoice;
  /** False when the default file does not exist and defaults were used. */
  readonly found: boolean;
}

function expandTilde(path: string, homeDir: string): string {
  if (path !== "~" && !path.startsWith("~/")) return path;
  const expanded = expandHome(path, homeDir);
  return expanded.ok ? expanded.path : path;
}

/** The file to read, in the order docs/reference.md gives. An empty `$PAIR_CONFIG` counts as unset. */
export function resolveConfigFile(options: Omit<LoadConfigOptions, "hostName">): ConfigFileChoice {
  if (options.file !== undefined)
    return { path: expandTilde(options.file, options.homeDir), via: "--config" };
  const fromEnv = options.env[CONFIG_ENV_VAR];
  if (fromEnv !== undefined && fromEnv !== "") {
    return { path: expandTilde(fromEnv, options.homeDir), via: CONFIG_ENV_VAR };
  }
  return { path: expandTilde(DEFAULT_CONFIG_FILE, options.homeDir), via: "default" };
}

function namedBy(choice: ConfigFileChoice): string {
  return choice.via === "default"
    ? ""
    : ` (named by ${choice.via === "PAIR_CONFIG" ? "$PAIR_CONFIG" : "--config"})`;
}

function fileError(
  choice: ConfigFileChoice,
  code: "file_not_found" | "file_unreadable",
  message: string,
  cause?: unknown,
): ConfigError {
  return new ConfigError(choice.path, [{ path: "", code, message: `${message}${namedBy(choice)}` }], {
    cause,
  });
}

function errnoCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined;
}

/**
 * Resolves, reads and validates the node's configuration.
 * @throws ConfigError (code `invalid_config`) for a missing named file, an unreadable file, or any problem in it.
 */
export async function loadConfig(options: LoadConfigOptions): Promise<LoadedConfig> {
  const host = { homeDir: options.homeDir, hostName: options.hostName ?? systemHost().hostName };
  const file = resolveConfigFile(options);
  if (file.path === "") throw fileError(file, "file_not_found", "an empty file name was given");
  let text: string;
  try {
    const info = await stat(file.path);
    if (!info.isFile()) throw fileError(file, "file_unreadable", `${file.path} is not a regular file`);
    if (info.size > MAX_CONFIG_FILE_BYTES) {
      throw fileError(file, "file_unreadable", `${file.path} is larger than ${MAX_CONFIG_FILE_BYTES} bytes`);
    }
    text = await readFile(file.path, "utf8");
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = errnoCode(error);
    if (code === "ENOENT" && file.via === "default") {
      return { config: parseConfig("", "defaults", host), file, found: false };
    }
    if (code === "ENOENT") throw fileError(file, "file_not_found", `no config file at ${file.path}`, error);
    throw fileError(file, "file_unreadable", `cannot read ${file.path} (${code ?? "error"})`, error);
  }
  return { config: parseConfig(text, file.path, host), file, found: true };
}
