/**
 * How message content crosses dialects: text parts ↔ one string, Ollama's bare base64 images ↔
 * OpenAI `image_url` data URLs, Ollama tool calls (arguments as an object, maybe no id) ↔ OpenAI
 * tool calls (arguments as a JSON string, always an id). Ids are derived from arguments, never
 * random.
 *
 * Must not know: requests as a whole, responses, streams, HTTP. PAIR never fetches a remote image.
 */

import type { OllamaToolCall } from "./ollama-wire.js";
import type { OpenAIToolCall } from "./openai-wire.js";

/** Text parts joined with a newline, so two parts never run their words together. */
export function joinText(
  content: string | readonly { readonly type: string; readonly text?: string }[] | null | undefined,
): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as readonly { readonly type: string; readonly text?: string }[])
    .flatMap((part) => (part.type === "text" && typeof part.text === "string" ? [part.text] : []))
    .join("\n");
}

const SIGNATURES: readonly { readonly mime: string; readonly test: (bytes: string) => boolean }[] = [
  { mime: "image/png", test: (b) => b.startsWith("\x89PNG") },
  { mime: "image/jpeg", test: (b) => b.startsWith("\xff\xd8\xff") },
  { mime: "image/gif", test: (b) => b.startsWith("GIF8") },
  { mime: "image/webp", test: (b) => b.startsWith("RIFF") && b.slice(8, 12) === "WEBP" },
  { mime: "image/bmp", test: (b) => b.startsWith("BM") },
];

/** The MIME type of a base64 image, from its first bytes; JPEG when unknown (what engines assume). */
export function sniffImageMime(base64: string): string {
  let head: string;
  try {
    head = atob(base64.slice(0, 16));
  } catch {
    return "image/jpeg";
  }
  return SIGNATURES.find((signature) => signature.test(head))?.mime ?? "image/jpeg";
}

/** Ollama image (bare base64) → OpenAI `image_url.url`. A data URL given by a lenient client stays as is. */
export function dataUrlOf(image: string): string {
  if (image.startsWith("data:")) return image;
  return `data:${sniffImageMime(image)};base64,${image}`;
}

/** OpenAI `image_url.url` → Ollama image (bare base64), or `undefined` if it is not a base64 data URL. */
export function base64OfDataUrl(url: string): string | undefined {
  const match = /^data:[^,;]*((?:;[^,;]*)*),/i.exec(url);
  if (match === null) return undefined;
  const params = (match[1] ?? "").toLowerCase().split(";");
  if (!params.includes("base64")) return undefined;
  return url.slice(match[0].length);
}

/**
 * OpenAI's `arguments` string → Ollama's arguments object. An empty string is `{}` (engines send it
 * for functions without parameters); anything that is not a JSON object is `undefined`.
 */
export function parseToolArguments(text: string): Record<string, unknown> | undefined {
  if (text.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

export function openAIToolCallOf(call: OllamaToolCall, id: string): OpenAIToolCall {
  return {
    id: call.id ?? id,
    type: "function",
    function: { name: call.function.name, arguments: JSON.stringify(call.function.arguments ?? {}) },
  };
}

/**
 * Pairs tool results with the calls they answer, for a history going from Ollama (results name the
 * tool, or nothing) to OpenAI (results carry the call's id), and back.
 */
export class ToolCallLedger {
  private readonly open: { id: string; name: string }[] = [];

  /** Records the calls of an assistant turn. */
  called(calls: readonly { readonly id: string; readonly name: string }[]): void {
    this.open.push(...calls);
  }

  /** The id a tool result answers: the oldest open call of that tool name, else the oldest open call. */
  idFor(toolName: string | undefined, fallback: string): string {
    let at = toolName === undefined ? -1 : this.open.findIndex((call) => call.name === toolName);
    if (at < 0) at = this.open.length > 0 ? 0 : -1;
    if (at < 0) return fallback;
    return this.open.splice(at, 1)[0]?.id ?? fallback;
  }

  /** The tool name of the call with this id, if it is known. */
  nameFor(id: string): string | undefined {
    const at = this.open.findIndex((call) => call.id === id);
    if (at < 0) return undefined;
    return this.open.splice(at, 1)[0]?.name;
  }
}
