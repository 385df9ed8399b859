/**
 * Server-sent events (the WHATWG event-stream format OpenAI streams in): a pure incremental
 * decoder that takes arbitrary byte chunks and returns complete events, and tiny encoders.
 *
 * Decoding follows the spec: lines end with CRLF, LF or CR; `:` starts a comment; `data:` lines
 * of one event are joined with "\n"; one space after the colon is dropped; `event:`, `id:` (unless
 * it holds NUL) and `retry:` (digits only) are kept; unknown fields are ignored; a blank line
 * dispatches the event, unless it has no `data` line. `id` is reported on the event that carries
 * it (PAIR never reconnects, so the spec's last-event-id memory is not kept). One leniency: at end
 * of stream a pending
 * event with data is dispatched even without its blank line. `[DONE]` is an ordinary event here;
 * `readOpenAIStreamEvent` gives it meaning. Bounds: `maxLineBytes` per line, `maxEventChars` of
 * data per event; exceeding either is an error result and the decoder stays failed.
 *
 * Must not know: either dialect's chunk shapes, sockets, HTTP.
 */

import { ByteLines, checkPositiveInteger, type DecodeResult } from "./byte-lines.js";

export interface SseEvent {
  /** `event:`; absent means the default type, `message`. */
  readonly event?: string;
  readonly data: string;
  readonly id?: string;
  /** `retry:` in milliseconds. */
  readonly retry?: number;
}

export interface SseDecoderOptions {
  readonly maxLineBytes?: number;
  readonly maxEventChars?: number;
}

/** A line longer than this is refused: 1 MiB holds any real chunk (a big tool-call delta included). */
export const DEFAULT_SSE_MAX_LINE_BYTES = 1_048_576;
export const DEFAULT_SSE_MAX_EVENT_CHARS = 4_194_304;

export class SseDecoder {
  private readonly lines: ByteLines;
  private readonly maxEventChars: number;
  private data: string[] = [];
  private dataChars = 0;
  private event: string | undefined;
  private id: string | undefined;
  private retry: number | undefined;
  private failed: DecodeResult<never> | undefined;

  constructor(options: SseDecoderOptions = {}) {
    this.lines = new ByteLines({
      maxLineBytes: options.maxLineBytes ?? DEFAULT_SSE_MAX_LINE_BYTES,
      crEndsLine: true,
    });
    this.maxEventChars = checkPositiveInteger(
      "maxEventChars",
      options.maxEventChars ?? DEFAULT_SSE_MAX_EVENT_CHARS,
    );
  }

  /** The events this chunk completes. */
  push(chunk: Uint8Array): DecodeResult<SseEvent[]> {
    if (this.failed !== undefined) return this.failed;
    const lines = this.lines.push(chunk);
    return lines.ok ? this.take(lines.value, false) : lines;
  }

  /** At end of stream: a last event still pending, if it has data. */
  end(): DecodeResult<SseEvent[]> {
    if (this.failed !== undefined) return this.failed;
    const lines = this.lines.end();
    return lines.ok ? this.take(lines.value, true) : lines;
  }

  private take(lines: readonly string[], atEnd: boolean): DecodeResult<SseEvent[]> {
    const events: SseEvent[] = [];
    for (const line of lines) {
      if (line === "") {
        const event = this.dispatch();
        if (event !== undefined) events.push(event);
        continue;
      }
      if (!this.field(line)) {
        this.failed = {
          ok: false,
          error: {
            code: "event_too_long",
            message: `an event's data is longer than ${this.maxEventChars} characters (maxEventChars)`,
          },
        };
        return this.failed;
      }
    }
    if (atEnd) {
      const event = this.dispatch();
      if (event !== undefined) events.push(event);
    }
    return { ok: true, value: events };
  }

  /** Applies one non-blank line; false when the event's data would exceed its bound. */
  private field(line: string): boolean {
    if (line.startsWith(":")) return true;
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (name) {
      case "data":
        this.dataChars += value.length + (this.data.length > 0 ? 1 : 0);
        if (this.dataChars > this.maxEventChars) return false;
        this.data.push(value);
        break;
      case "event":
        this.event = value;
        break;
      case "id":
        if (!value.includes("\0")) this.id = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
        break;
    }
    return true;
  }

  private dispatch(): SseEvent | undefined {
    const hasData = this.data.length > 0;
    const event: SseEvent = {
      ...(this.event !== undefined && this.event !== "" ? { event: this.event } : {}),
      data: this.data.join("\n"),
      ...(this.id !== undefined ? { id: this.id } : {}),
      ...(this.retry !== undefined ? { retry: this.retry } : {}),
    };
    this.data = [];
    this.dataChars = 0;
    this.event = undefined;
    this.id = undefined;
    this.retry = undefined;
    return hasData ? event : undefined;
  }
}

/** What one event of an OpenAI stream means. */
export type OpenAIStreamEvent =
  | { readonly kind: "done" }
  | { readonly kind: "json"; readonly value: unknown }
  | { readonly kind: "invalid"; readonly message: string };

/** `[DONE]` ends the stream; any other data is one JSON chunk (or a JSON error item). */
export function readOpenAIStreamEvent(event: SseEvent): OpenAIStreamEvent {
  const data = event.data.trim();
  if (data === "[DONE]") return { kind: "done" };
  try {
    const value: unknown = JSON.parse(data);
    return { kind: "json", value };
  } catch {
    return { kind: "invalid", message: `an SSE event's data is not JSON: ${data.slice(0, 80)}` };
  }
}

export const SSE_CONTENT_TYPE = "text/event-stream; charset=utf-8";

/** The `[DONE]` sentinel OpenAI writes after the last chunk. */
export const SSE_DONE = "data: [DONE]\n\n";

/** One `data:` event holding a JSON value (JSON text has no raw newline, so one line suffices). */
export function encodeSseData(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}

/** Any event; multi-line data becomes several `data:` lines. Names must not contain a newline. */
export function encodeSseEvent(event: SseEvent): string {
  let out = "";
  if (event.event !== undefined) out += `event: ${event.event}\n`;
  if (event.id !== undefined) out += `id: ${event.id}\n`;
  if (event.retry !== undefined) out += `retry: ${event.retry}\n`;
  for (const line of event.data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** A comment line, e.g. a keep-alive that clients ignore. */
export function encodeSseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, " ")}\n\n`;
}
