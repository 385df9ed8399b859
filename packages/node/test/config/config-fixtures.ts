/**
 * Shared by the config tests: a fixed host (home dir, host name), parsing that returns the refusal
 * instead of throwing, and reading fixtures.
 * Must not know: any one test's expectations.
 */

import { readFileSync } from "node:fs";
import { expect } from "vitest";
import {
  ConfigError,
  parseConfig,
  type ConfigHost,
  type ConfigProblem,
  type PairConfig,
} from "../../src/config/index.js";

export const HOST: ConfigHost = { homeDir: "/home/ada", hostName: "ada-laptop" };

export function parse(text: string): PairConfig {
  return parseConfig(text, "test.yaml", HOST);
}

/** The ConfigError `text` is refused with (fails the test if it is accepted). */
export function refusal(text: string): ConfigError {
  try {
    parseConfig(text, "test.yaml", HOST);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`expected a refusal for:\n${text}`);
}

/** `path: code` of every problem, in file order. */
export function problemsOf(text: string): string[] {
  return refusal(text).problems.map((p: ConfigProblem) => `${p.path}: ${p.code}`);
}

export function fixture(name: string): string {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");
}

/** A minimal valid rented node, to which a test adds or overrides keys (YAML flow mapping body). */
export function rentedNode(extra: string): string {
  return `rented_nodes:\n  - { name: r1, provider: openai-compatible, base_url: "https://gpu.example.com/v1", ${extra} }\n`;
}
