/**
 * `pair ps`: what is loaded where, as `ollama ps` shows it — the node's Ollama-compatible `/api/ps`
 * (each entry names its serving node and engine) as a table of name, node, engine, size, processor,
 * context and until when it stays loaded; `--json` prints the route's `models` array as it is.
 * Must not know: how the node learns what is loaded (server/model-routes.ts), HTTP details.
 */

import { ask } from "./admin-commands.js";
import { unexpected } from "./admin-views.js";
import { EXIT_OK } from "./cli-errors.js";
import type { Command } from "./command.js";
import { CONFIG_OPTION, HELP_OPTION, JSON_OPTION, parseCommandArgs } from "./command-args.js";
import { formatDurationMs, renderTable, UNKNOWN } from "./text-table.js";

/** One `/api/ps` entry, as much of it as the table reads. */
export interface LoadedModelJson {
  readonly name: string;
  readonly node?: string;
  readonly engine?: string;
  readonly size?: number;
  readonly size_vram?: number;
  readonly context_length?: number;
  readonly expires_at?: string;
}

/** `4.7 GB`, `512 MB`, as Ollama prints sizes (powers of 1000). */
function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined || !(bytes > 0)) return UNKNOWN;
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${unit >= 3 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** `100% GPU`, `100% CPU`, `25%/75% CPU/GPU` from the share of the model in VRAM, as `ollama ps`. */
export function processorOf(size: number | undefined, vram: number | undefined): string {
  if (size === undefined || vram === undefined || !(size > 0)) return UNKNOWN;
  const gpu = Math.round((Math.min(vram, size) / size) * 100);
  if (gpu === 100) return "100% GPU";
  if (gpu === 0) return "100% CPU";
  return `${100 - gpu}%/${gpu}% CPU/GPU`;
}

/** Beyond this an expiry is no expiry. */
const FOREVER_MS = 100 * 365 * 24 * 3_600_000;

function untilOf(expiresAt: string | undefined, nowMs: number): string {
  const at = expiresAt === undefined ? Number.NaN : Date.parse(expiresAt);
  if (Number.isNaN(at)) return UNKNOWN;
  if (at <= nowMs) return "now";
  // Engines that never unload (vLLM, llama.cpp) say so with a far date, as Ollama does: `ollama ps` prints Forever.
  return at - nowMs > FOREVER_MS ? "forever" : `in ${formatDurationMs(at - nowMs)}`;
}

export function psLines(models: readonly LoadedModelJson[], nowMs: number): string[] {
  if (models.length === 0) return ["no model is loaded (pair models lists what can be served)"];
  return renderTable(
    [
      { header: "NAME" },
      { header: "NODE" },
      { header: "ENGINE" },
      { header: "SIZE", align: "right" },
      { header: "PROCESSOR" },
      { header: "CONTEXT", align: "right" },
      { header: "UNTIL" },
    ],
    models.map((m) => [
      m.name,
      m.node ?? UNKNOWN,
      m.engine ?? UNKNOWN,
      formatBytes(m.size),
      processorOf(m.size, m.size_vram),
      m.context_length === undefined ? UNKNOWN : String(m.context_length),
      untilOf(m.expires_at, nowMs),
    ]),
  );
}

function asLoaded(json: unknown): LoadedModelJson[] {
  const models = (json as { models?: unknown } | null)?.models;
  if (!Array.isArray(models) || !models.every((m) => typeof (m as { name?: unknown })?.name === "string"))
    throw unexpected("/api/ps");
  return models as LoadedModelJson[];
}

export const psCommand: Command = {
  name: "ps",
  summary: "what is loaded where: model, node, engine, size, processor, context (as ollama ps)",
  usage: `Usage: pair ps [--config FILE] [--json]

Lists the models loaded now, as \`ollama ps\` does, with the node and engine serving each: an
Ollama engine's own loaded models (size, share in GPU memory, until when it stays loaded), the
models an OpenAI-compatible engine serves, and the models of running rented nodes.
--json prints the \`models\` array of GET /api/ps (Ollama's fields, plus "node" and "engine").

Options:
  --config FILE  the node's config (else $PAIR_CONFIG, else the default file (README)): its
                 node.listen is where the node is asked, its data_dir holds the admin token
  --json         print JSON for scripts instead of a table
  -h, --help     show this help`,
  async run(args, io) {
    const flags = parseCommandArgs(args, { ...CONFIG_OPTION, ...JSON_OPTION, ...HELP_OPTION });
    const models = asLoaded(await ask(io, flags.config, "/api/ps"));
    if (flags.json === true) io.stdout(`${JSON.stringify(models, null, 2)}\n`);
    else
      io.stdout(
        psLines(models, io.nowMs())
          .map((line) => `${line}\n`)
          .join(""),
      );
    return EXIT_OK;
  },
};
