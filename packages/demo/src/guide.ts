/**
 * What `pair demo` prints once its sandbox is up: for a person, what runs where and what to try
 * (curl in both dialects, streamed and not, the `openai` Python client, the `ollama` CLI, and the
 * `pair jobs` / `pair history` lines that show those requests); for scripts, one JSON line.
 * Must not know: how the sandbox is built or stopped.
 */

import type { DemoSandbox } from "./sandbox.js";

/** The `--json` line: more fields may be added, none renamed. */
export interface DemoJson {
  readonly url: string;
  readonly config_file: string;
  readonly data_dir: string;
  readonly models: readonly string[];
  readonly node: string;
  readonly engines: readonly {
    readonly name: string;
    readonly api: string;
    readonly base_url: string;
    readonly models: readonly string[];
  }[];
}

export function demoJson(sandbox: DemoSandbox): DemoJson {
  return {
    url: sandbox.url,
    config_file: sandbox.configFile,
    data_dir: sandbox.dataDir,
    models: sandbox.models,
    node: sandbox.nodeName,
    engines: sandbox.engines.map((e) => ({
      name: e.name,
      api: e.api,
      base_url: e.baseUrl,
      models: e.models,
    })),
  };
}

/** A word as a POSIX shell reads it back unchanged. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

function pick(sandbox: DemoSandbox, api: "ollama" | "openai", fallback: string): string {
  const own = sandbox.engines.find((e) => e.api === api)?.models ?? [];
  const shared = new Set(sandbox.engines.filter((e) => e.api !== api).flatMap((e) => e.models));
  return own.find((m) => !shared.has(m)) ?? own[0] ?? sandbox.models[0] ?? fallback;
}

export function demoGuide(sandbox: DemoSandbox, pairCommand = "npx pair"): string {
  const url = sandbox.url;
  const hostPort = url.replace(/^https?:\/\//, "");
  const ollamaModel = pick(sandbox, "ollama", "llama3.2:1b");
  const openAiModel = pick(sandbox, "openai", "Qwen/Qwen2.5-7B-Instruct");
  const shared = sandbox.models.find((m) => sandbox.engines.every((e) => e.models.includes(m)));
  const chat = (model: string, stream: boolean) =>
    JSON.stringify({ model, messages: [{ role: "user", content: "Why is the sky blue?" }], stream });
  const width = Math.max(...sandbox.engines.map((e) => e.name.length));
  const engineLines = sandbox.engines.map(
    (e) =>
      `  ${e.name.padEnd(width)}  ${e.label} emulator, ${e.api === "ollama" ? "Ollama" : "OpenAI"} API on ${e.baseUrl}: ` +
      e.models.join(", "),
  );
  const config = shellWord(sandbox.configFile);
  return [
    `PAIR demo: node "${sandbox.nodeName}" on ${url} (its own port; nothing here touches 11434)`,
    "",
    "Engines (emulated, on loopback):",
    ...engineLines,
    ...(shared === undefined
      ? []
      : [`  ${shared} is on every engine: the node sends each request to the least loaded one.`]),
    "",
    "Try it from another terminal:",
    "",
    "  # OpenAI API, one answer",
    `  curl -s ${url}/v1/chat/completions -H 'content-type: application/json' \\`,
    `    -d '${chat(ollamaModel, false)}'`,
    "",
    "  # OpenAI API, streamed (SSE)",
    `  curl -sN ${url}/v1/chat/completions -H 'content-type: application/json' \\`,
    `    -d '${chat(openAiModel, true)}'`,
    "",
    "  # Ollama API, streamed (NDJSON), served by the OpenAI-only engine: PAIR translates",
    `  curl -sN ${url}/api/chat -d '${chat(openAiModel, true)}'`,
    "",
    "  # Ollama API, one answer",
    `  curl -s ${url}/api/generate -d '${JSON.stringify({ model: ollamaModel, prompt: "Why is the sky blue?", stream: false })}'`,
    "",
    "  # Python, the openai client (pip install openai)",
    "  from openai import OpenAI",
    `  client = OpenAI(base_url="${url}/v1", api_key="unused")`,
    `  stream = client.chat.completions.create(model="${openAiModel}", stream=True,`,
    `      messages=[{"role": "user", "content": "Why is the sky blue?"}])`,
    `  for chunk in stream: print(chunk.choices[0].delta.content or "", end="", flush=True)`,
    "",
    "  # The ollama CLI",
    `  OLLAMA_HOST=${hostPort} ollama run ${ollamaModel} "Why is the sky blue?"`,
    "",
    "See your requests:",
    `  PAIR_CONFIG=${config} ${pairCommand} jobs      # running now`,
    `  PAIR_CONFIG=${config} ${pairCommand} history   # finished (--since 15m, --json)`,
    `  PAIR_CONFIG=${config} ${pairCommand} status`,
    "",
    "Or in a browser: the dashboard (a one-time login link):",
    `  PAIR_CONFIG=${config} ${pairCommand} ui`,
    "",
    "Ctrl-C stops the demo and removes everything it made.",
    "",
  ].join("\n");
}
