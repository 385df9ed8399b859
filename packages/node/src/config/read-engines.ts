/**
 * The `engines:` list: local engines adopted by base URL. With no `engines` key the node adopts a
 * local Ollama on 127.0.0.1:11435; `engines: []` adopts none. Names are unique.
 * Must not know: YAML, engine wire formats, probing.
 */

import { ENGINE_APIS, type EngineApi, type EngineConfig } from "./config-types.js";
import { DEFAULT_ENGINE, ENGINE_DEFAULTS, LIMITS, MS_PER_SECOND } from "./defaults.js";
import { Section } from "./field-reader.js";
import type { ProblemList } from "./problems.js";
import { readContextTokens } from "./read-context-tokens.js";

export const ENGINE_KEYS = [
  "name",
  "api",
  "base_url",
  "max_concurrent",
  "probe_interval_s",
  "first_byte_timeout_s",
  "context_tokens",
  "num_ctx",
] as const;

const SECONDS = { ms: MS_PER_SECOND, label: "seconds" } as const;

function engineDefaults(name: string, api: EngineApi, baseUrl: string): EngineConfig {
  return {
    name,
    api,
    baseUrl,
    maxConcurrent: ENGINE_DEFAULTS.max_concurrent,
    probeIntervalMs: ENGINE_DEFAULTS.probe_interval_s * MS_PER_SECOND,
    firstByteTimeoutMs: ENGINE_DEFAULTS.first_byte_timeout_s * MS_PER_SECOND,
  };
}

/** What a file without an `engines` key gets. */
export function defaultEngines(): EngineConfig[] {
  return [engineDefaults(DEFAULT_ENGINE.name, DEFAULT_ENGINE.api, DEFAULT_ENGINE.base_url)];
}

/** The path part of a normalised base URL (`http://h:1/v1` → `/v1`). */
function urlPath(baseUrl: string): string {
  return new URL(baseUrl).pathname.replace(/\/+$/, "");
}

function checkBaseUrlForApi(entry: Section, api: EngineApi, baseUrl: string): void {
  const path = urlPath(baseUrl);
  switch (api) {
    case "openai":
      if (!path.endsWith("/v1")) {
        entry.report(
          "base_url",
          "invalid_value",
          "an openai engine's base_url ends in /v1 (e.g. http://127.0.0.1:8000/v1)",
        );
      }
      return;
    case "ollama":
      if (path.endsWith("/v1") || path.endsWith("/api")) {
        entry.report(
          "base_url",
          "invalid_value",
          "an ollama engine's base_url is the host without /api or /v1 (e.g. http://127.0.0.1:11435); " +
            "for its OpenAI routes use api: openai",
        );
      }
      return;
  }
}

function readEngine(entry: Section): { name: string | undefined; engine: EngineConfig | undefined } {
  const name = entry.name("name", { required: true });
  const api = entry.oneOf("api", ENGINE_APIS);
  if (api === undefined && !entry.has("api")) entry.missing("api", ` (${ENGINE_APIS.join(" or ")})`);
  const baseUrl = entry.url("base_url", { required: true });
  if (api !== undefined && baseUrl !== undefined) checkBaseUrlForApi(entry, api, baseUrl);
  const defaults = engineDefaults(name ?? "", api ?? "ollama", baseUrl ?? "");
  const engine: EngineConfig = {
    ...defaults,
    maxConcurrent: entry.integer(
      "max_concurrent",
      { min: 1, max: LIMITS.maxConcurrent },
      defaults.maxConcurrent,
    ),
    probeIntervalMs: entry.durationMs("probe_interval_s", SECONDS, defaults.probeIntervalMs),
    firstByteTimeoutMs: entry.durationMs("first_byte_timeout_s", SECONDS, defaults.firstByteTimeoutMs),
    ...contextSettings(entry, api),
  };
  const complete = name !== undefined && api !== undefined && baseUrl !== undefined;
  return { name, engine: complete ? engine : undefined };
}

/** `context_tokens` and, on an Ollama engine, `num_ctx: auto | off` (docs/context.md). */
function contextSettings(
  entry: Section,
  api: EngineApi | undefined,
): Pick<EngineConfig, "contextTokens" | "raiseNumCtx"> {
  const contextTokens = readContextTokens(entry);
  const numCtx = entry.oneOf("num_ctx", ["auto", "off"] as const);
  if (numCtx !== undefined && api !== "ollama")
    entry.report("num_ctx", "invalid_value", "num_ctx applies to an ollama engine only");
  return {
    ...(contextTokens === undefined ? {} : { contextTokens }),
    ...(numCtx === "off" ? { raiseNumCtx: false } : {}),
  };
}

export function readEngines(problems: ProblemList, top: Section): EngineConfig[] {
  if (!top.has("engines")) return defaultEngines();
  const engines: EngineConfig[] = [];
  const seen = new Set<string>();
  top.list("engines", LIMITS.maxEngines).forEach((value, index) => {
    const entry = Section.open(problems, value, [...top.at("engines"), index], ENGINE_KEYS);
    const { name, engine } = readEngine(entry);
    if (name !== undefined && seen.has(name)) {
      entry.report("name", "duplicate_name", "another engine has the same name");
    }
    if (name !== undefined) seen.add(name);
    if (engine !== undefined) engines.push(engine);
  });
  return engines;
}
