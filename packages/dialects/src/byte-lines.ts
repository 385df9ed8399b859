/**
 * Incremental line splitting over raw bytes, shared by the SSE and NDJSON decoders. Bytes arrive in
 * arbitrary chunks; a line is decoded from UTF-8 only once it is complete, so a chunk boundary
 * inside a multi-byte character changes nothing (LF and CR never occur inside a UTF-8 sequence).
 * The bytes held for an unfinished line are bounded by `maxLineBytes`: exceeding it is an error
 * result, and the splitter stays failed. A byte-order mark at the very start is dropped.
 *
 * Must not know: SSE, JSON, either dialect, sockets.
 */

const LF = 0x0a;
const CR = 0x0d;

export interface StreamDecodeError {
  readonly code: "line_too_long" | "event_too_long" | "invalid_json";
  readonly message: string;
}

export type DecodeResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: StreamDecodeError };

export interface ByteLinesOptions {
  /** Bytes of one line, terminator excluded (for NDJSON a CR before the LF counts). */
  readonly maxLineBytes: number;
  /** SSE ends lines with CRLF, LF or CR; NDJSON with LF only. */
  readonly crEndsLine: boolean;
}

export function checkPositiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer, got ${String(value)}`);
  }
  return value;
}

export class ByteLines {
  private readonly decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  /** The previous chunk ended in CR: an LF opening this one ends nothing. */
  private afterCR = false;
  private atStart = true;
  private failure: StreamDecodeError | undefined;

  constructor(private readonly options: ByteLinesOptions) {
    checkPositiveInteger("maxLineBytes", options.maxLineBytes);
  }

  /** The complete lines this chunk finishes. */
  push(chunk: Uint8Array): DecodeResult<string[]> {
    if (this.failure !== undefined) return { ok: false, error: this.failure };
    const lines: string[] = [];
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (this.afterCR) {
        this.afterCR = false;
        if (byte === LF && i === start) {
          start = i + 1;
          continue;
        }
      }
      if (byte !== LF && !(byte === CR && this.options.crEndsLine)) continue;
      if (this.pendingBytes + (i - start) > this.options.maxLineBytes) return this.fail();
      lines.push(this.line(chunk.subarray(start, i)));
      start = i + 1;
      if (byte === CR) this.afterCR = true;
    }
    const rest = chunk.subarray(start);
    if (this.pendingBytes + rest.length > this.options.maxLineBytes) return this.fail();
    if (rest.length > 0) {
      this.pending.push(rest.slice());
      this.pendingBytes += rest.length;
    }
    return { ok: true, value: lines };
  }

  /** At the end of the stream: the last line, if it had no terminator. */
  end(): DecodeResult<string[]> {
    if (this.failure !== undefined) return { ok: false, error: this.failure };
    if (this.pendingBytes === 0) return { ok: true, value: [] };
    return { ok: true, value: [this.line(new Uint8Array(0))] };
  }

  private line(tail: Uint8Array): string {
    let bytes = tail;
    if (this.pendingBytes > 0) {
      bytes = new Uint8Array(this.pendingBytes + tail.length);
      let at = 0;
      for (const piece of this.pending) {
        bytes.set(piece, at);
        at += piece.length;
      }
      bytes.set(tail, at);
      this.pending = [];
      this.pendingBytes = 0;
    }
    let text = this.decoder.decode(bytes);
    if (this.atStart) {
      this.atStart = false;
      if (text.startsWith("\uFEFF")) text = text.slice(1);
    }
    return text;
  }

  private fail(): DecodeResult<never> {
    this.pending = [];
    this.pendingBytes = 0;
    this.failure = {
      code: "line_too_long",
      message: `a stream line is longer than ${this.options.maxLineBytes} bytes (maxLineBytes)`,
    };
    return { ok: false, error: this.failure };
  }
}
