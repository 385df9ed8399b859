/**
 * Newline-delimited JSON (Ollama's streaming format): a pure incremental decoder that takes
 * arbitrary byte chunks (split anywhere, inside a multi-byte character too) and returns the
 * complete JSON values, and a tiny encoder.
 *
 * Lines end with LF; a CR before it is dropped; blank lines are skipped. A line that is not JSON,
 * or longer than `maxLineBytes`, is an error result, and the decoder stays failed: a stream that
 * lost its framing cannot be trusted further. A last line without its LF is read by `end`.
 *
 * Must not know: either dialect's object shapes, sockets, HTTP.
 */

import { ByteLines, type DecodeResult } from "./byte-lines.js";

export interface NdjsonDecoderOptions {
  readonly maxLineBytes?: number;
}

/** A line longer than this is refused: 1 MiB holds any real stream object. */
export const DEFAULT_NDJSON_MAX_LINE_BYTES = 1_048_576;

export class NdjsonDecoder {
  private readonly lines: ByteLines;
  private lineNumber = 0;
  private failed: DecodeResult<never> | undefined;

  constructor(options: NdjsonDecoderOptions = {}) {
    this.lines = new ByteLines({
      maxLineBytes: options.maxLineBytes ?? DEFAULT_NDJSON_MAX_LINE_BYTES,
      crEndsLine: false,
    });
  }

  /** The values this chunk completes. */
  push(chunk: Uint8Array): DecodeResult<unknown[]> {
    if (this.failed !== undefined) return this.failed;
    const lines = this.lines.push(chunk);
    return lines.ok ? this.parse(lines.value) : lines;
  }

  /** At end of stream: the last value, if its line had no LF. */
  end(): DecodeResult<unknown[]> {
    if (this.failed !== undefined) return this.failed;
    const lines = this.lines.end();
    return lines.ok ? this.parse(lines.value) : lines;
  }

  private parse(lines: readonly string[]): DecodeResult<unknown[]> {
    const values: unknown[] = [];
    for (const raw of lines) {
      this.lineNumber++;
      const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
      if (line.trim() === "") continue;
      try {
        const value: unknown = JSON.parse(line);
        values.push(value);
      } catch {
        this.failed = {
          ok: false,
          error: {
            code: "invalid_json",
            message: `NDJSON line ${this.lineNumber} is not JSON: ${line.slice(0, 80)}`,
          },
        };
        return this.failed;
      }
    }
    return { ok: true, value: values };
  }
}

export const NDJSON_CONTENT_TYPE = "application/x-ndjson";

export function encodeNdjson(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}
