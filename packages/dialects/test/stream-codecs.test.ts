import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  NdjsonDecoder,
  SSE_DONE,
  SseDecoder,
  encodeNdjson,
  encodeSseComment,
  encodeSseData,
  encodeSseEvent,
  readOpenAIStreamEvent,
  type DecodeResult,
  type SseEvent,
} from "../src/index.js";
import { encoder } from "./fixtures.js";

/** Cuts `bytes` at the given offsets (any offset: inside a multi-byte character too). */
function splitAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const point of points) {
    out.push(bytes.slice(from, point));
    from = point;
  }
  out.push(bytes.slice(from));
  return out;
}

interface Decoder<T> {
  push(chunk: Uint8Array): DecodeResult<T[]>;
  end(): DecodeResult<T[]>;
}

/** Everything a decoder yields for these chunks, or its first error. */
function drain<T>(decoder: Decoder<T>, chunks: readonly Uint8Array[]): DecodeResult<T[]> {
  const all: T[] = [];
  for (const chunk of chunks) {
    const step = decoder.push(chunk);
    if (!step.ok) return step;
    all.push(...step.value);
  }
  const last = decoder.end();
  if (!last.ok) return last;
  all.push(...last.value);
  return { ok: true, value: all };
}

function sseOf(text: string, chunks?: readonly number[], options = {}): DecodeResult<SseEvent[]> {
  const bytes = encoder.encode(text);
  return drain(new SseDecoder(options), chunks === undefined ? [bytes] : splitAt(bytes, chunks));
}

/** Text with many multi-byte characters, so cuts often fall inside one. */
const unicodeText = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc
    .array(fc.constantFrom("a", " ", ":", "é", "€", "中", "😀", "ß", "\u{1F468}\u200D\u{1F469}"), {
      maxLength: 30,
    })
    .map((parts) => parts.join("")),
);
const singleLine = unicodeText.map((s) => s.replace(/[\r\n\0]/g, "_"));

const sseEvent: fc.Arbitrary<SseEvent> = fc.record(
  {
    event: singleLine.filter((s) => s !== ""),
    data: fc
      .array(
        unicodeText.map((s) => s.replace(/\r/g, "")),
        { minLength: 1, maxLength: 3 },
      )
      .map((l) => l.join("\n")),
    id: singleLine,
    retry: fc.nat({ max: 100_000 }),
  },
  { requiredKeys: ["data"] },
);

const lineEnding = fc.constantFrom("\n", "\r\n", "\r");

describe("SseDecoder", () => {
  it("reads data lines, comments, multi-line data, event/id/retry fields and CRLF", () => {
    const text =
      ": keep-alive\r\n" +
      "event: delta\r\nid: 7\r\nretry: 1500\r\ndata: first\r\ndata:second\r\n\r\n" +
      'data: {"a":1}\n\n' +
      "data\n\n" + // a field with no colon: empty data
      "event: ignored-without-data\n\n" +
      "unknown: field\ndata: x\rdata: y\r\r" +
      "data: [DONE]\n\n";
    const result = sseOf(text);
    expect(result).toEqual({
      ok: true,
      value: [
        { event: "delta", id: "7", retry: 1500, data: "first\nsecond" },
        { data: '{"a":1}' },
        { data: "" },
        { data: "x\ny" },
        { data: "[DONE]" },
      ],
    });
  });

  it("drops one leading space only, keeps colons in the value, ignores a malformed retry and an id with NUL", () => {
    const result = sseOf("data:  two spaces: kept\nretry: 12a\nid: a\0b\n\n");
    expect(result).toEqual({ ok: true, value: [{ data: " two spaces: kept" }] });
  });

  it("dispatches a last event that has data but no blank line at end of stream", () => {
    expect(sseOf("data: tail")).toEqual({ ok: true, value: [{ data: "tail" }] });
    expect(sseOf("data: tail\n")).toEqual({ ok: true, value: [{ data: "tail" }] });
  });

  it("ignores a byte-order mark at the start, even split across chunks", () => {
    const text = "\uFEFFdata: x\n\n";
    expect(sseOf(text, [1, 2])).toEqual({ ok: true, value: [{ data: "x" }] });
  });

  it("gives the same events however the bytes are split, inside multi-byte characters too", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(sseEvent, lineEnding, fc.boolean()), { maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (events, cuts) => {
          const text = events
            .map(
              ([event, eol, comment]) =>
                (comment ? ": ping\n" : "") + encodeSseEvent(event).replace(/\n/g, eol),
            )
            .join("");
          const whole = sseOf(text);
          expect(whole).toEqual({ ok: true, value: events.map(([event]) => event) });
          expect(sseOf(text, cuts)).toEqual(whole);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("refuses a line longer than maxLineBytes, however split, and accepts every shorter one", () => {
    fc.assert(
      fc.property(
        fc.array(singleLine, { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 48 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (values, maxLineBytes, cuts) => {
          const lines = values.map((v) => `data: ${v}`);
          const text = lines.map((l) => `${l}\n\n`).join("");
          const tooLong = lines.some((l) => encoder.encode(l).length > maxLineBytes);
          const result = sseOf(text, cuts, { maxLineBytes });
          expect(result.ok).toBe(!tooLong);
          if (!result.ok) expect(result.error.code).toBe("line_too_long");
        },
      ),
      { numRuns: 300 },
    );
  });

  it("refuses an event whose data outgrows maxEventChars, and stays failed", () => {
    const decoder = new SseDecoder({ maxEventChars: 10 });
    const first = decoder.push(encoder.encode("data: 123456\ndata: 7890\n"));
    expect(first.ok).toBe(false);
    if (!first.ok) expect(first.error.code).toBe("event_too_long");
    expect(decoder.push(encoder.encode("\n")).ok).toBe(false);
  });

  it("refuses nonsensical bounds at construction", () => {
    expect(() => new SseDecoder({ maxLineBytes: 0 })).toThrow(RangeError);
    expect(() => new SseDecoder({ maxEventChars: 1.5 })).toThrow(RangeError);
  });

  it("encodes data, [DONE] and comments so the decoder reads them back", () => {
    const text = encodeSseData({ a: "x\ny" }) + encodeSseComment("keep\nalive") + SSE_DONE;
    const result = sseOf(text);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.map(readOpenAIStreamEvent)).toEqual([
      { kind: "json", value: { a: "x\ny" } },
      { kind: "done" },
    ]);
    expect(readOpenAIStreamEvent({ data: "{oops" }).kind).toBe("invalid");
  });
});

function ndjsonOf(text: string, chunks?: readonly number[], options = {}): DecodeResult<unknown[]> {
  const bytes = encoder.encode(text);
  return drain(new NdjsonDecoder(options), chunks === undefined ? [bytes] : splitAt(bytes, chunks));
}

describe("NdjsonDecoder", () => {
  it("reads one value per line, skips blank lines, drops a CR before LF, reads a last line without LF", () => {
    expect(ndjsonOf('{"a":1}\r\n\n  \n[2]\n"€"')).toEqual({ ok: true, value: [{ a: 1 }, [2], "€"] });
  });

  it("gives the same values however the bytes are split, inside multi-byte characters too", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.jsonValue(), fc.constantFrom("\n", "\r\n", "\n\n")), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 16 }),
        (entries, cuts) => {
          const values = entries.map(([value]) => value);
          const text = entries.map(([value, eol]) => JSON.stringify(value) + eol).join("");
          const expected = JSON.parse(JSON.stringify(values)) as unknown;
          expect(ndjsonOf(text)).toEqual({ ok: true, value: expected });
          expect(ndjsonOf(text, cuts)).toEqual({ ok: true, value: expected });
        },
      ),
      { numRuns: 300 },
    );
  });

  it("splits inside every multi-byte character of a line and still decodes it", () => {
    const text = encodeNdjson({ text: "héllo € 中文 😀" });
    const bytes = encoder.encode(text);
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(ndjsonOf(text, [cut])).toEqual({ ok: true, value: [{ text: "héllo € 中文 😀" }] });
    }
  });

  it("refuses a line longer than maxLineBytes, however split, and accepts every shorter one", () => {
    fc.assert(
      fc.property(
        fc.array(unicodeText, { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 64 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (values, maxLineBytes, cuts) => {
          const lines = values.map((v) => JSON.stringify(v));
          const tooLong = lines.some((l) => encoder.encode(l).length > maxLineBytes);
          const result = ndjsonOf(lines.map((l) => `${l}\n`).join(""), cuts, { maxLineBytes });
          expect(result.ok).toBe(!tooLong);
          if (!result.ok) expect(result.error.code).toBe("line_too_long");
        },
      ),
      { numRuns: 300 },
    );
  });

  it("refuses a line that is not JSON, naming the line, and stays failed", () => {
    const decoder = new NdjsonDecoder();
    const result = decoder.push(encoder.encode('{"ok":1}\nnot json\n'));
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.code).toBe("invalid_json");
      expect(result.error.message).toContain("line 2");
    }
    expect(decoder.push(encoder.encode('{"ok":2}\n')).ok).toBe(false);
  });
});
