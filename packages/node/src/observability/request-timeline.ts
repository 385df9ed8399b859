/**
 * A per-request timeline for the benchmarks: when `PAIR_TIMELINE_FILE` names a file at start, each
 * routed request records when it passed each step (accepted, body read, routed, upstream request
 * sent, upstream headers, first upstream chunk, first chunk written, first write flushed, end), in
 * milliseconds on the wall clock with sub-millisecond precision (`performance.timeOrigin + now()`, so
 * another process on the same machine can line its own times up), and appends one JSON line per
 * request to that file. Off (the default), `startTimeline` returns undefined and every mark is one
 * optional-chaining check: nothing is allocated or measured. Never carries request text.
 * Must not know: HTTP, routing, forwarding (they call `mark`).
 */

import { closeSync, openSync, writeSync } from "node:fs";

/** The steps a routed request's timeline may name, in the order they happen. */
export type TimelineStep =
  | "bodyRead"
  | "validated"
  | "historyBegun"
  | "slot"
  | "upstreamSent"
  | "upstreamHeaders"
  | "firstRead"
  | "firstWritten"
  | "firstFlushed"
  | "end";

export interface RequestTimeline {
  /** Record that the request passed `step` now (the first time only). */
  mark(step: TimelineStep): void;
  /** Write the timeline out (once), with the outcome. */
  finish(outcome: string): void;
}

const FLUSH_LINES = 256;

// Sub-millisecond wall time, which the clock's `wallMs` (Date.now, whole ms) cannot give a timeline.
// eslint-disable-next-line no-restricted-properties -- read outside the runtime for its precision
const wallMs = (): number => performance.timeOrigin + performance.now();

class FileTimelines {
  readonly #path: string;
  #fd: number | undefined;
  #lines: string[] = [];
  readonly #onExit: () => void;

  constructor(path: string) {
    this.#path = path;
    this.#onExit = () => this.close();
    process.once("exit", this.#onExit);
  }

  add(line: string): void {
    this.#lines.push(line);
    if (this.#lines.length >= FLUSH_LINES) this.flush();
  }

  flush(): void {
    if (this.#lines.length === 0) return;
    this.#fd ??= openSync(this.#path, "a");
    writeSync(this.#fd, this.#lines.join("\n") + "\n");
    this.#lines = [];
  }

  close(): void {
    this.flush();
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
    process.off("exit", this.#onExit);
  }
}

class Timeline implements RequestTimeline {
  readonly #out: FileTimelines;
  readonly #t0: number;
  readonly #trace: string | undefined;
  readonly #marks: Partial<Record<TimelineStep, number>> = {};
  #done = false;

  constructor(out: FileTimelines, t0: number, trace: string | undefined) {
    this.#out = out;
    this.#t0 = t0;
    this.#trace = trace;
  }

  mark(step: TimelineStep): void {
    if (this.#marks[step] === undefined) this.#marks[step] = wallMs() - this.#t0;
  }

  finish(outcome: string): void {
    if (this.#done) return;
    this.#done = true;
    this.mark("end");
    this.#out.add(JSON.stringify({ trace: this.#trace, t0: this.#t0, outcome, marks: this.#marks }));
  }
}

/** Timelines written to one file (what `PAIR_TIMELINE_FILE` turns on; tests open their own). */
export interface TimelineFile {
  /** A timeline for a request accepted now; `trace` is the client's `x-pair-trace` header. */
  start(trace: string | string[] | undefined): RequestTimeline;
  /** Write out what is buffered (the process's exit does it otherwise). */
  flush(): void;
  close(): void;
}

export function openTimelineFile(path: string): TimelineFile {
  const out = new FileTimelines(path);
  return {
    start: (trace) => new Timeline(out, wallMs(), typeof trace === "string" ? trace.slice(0, 64) : undefined),
    flush: () => out.flush(),
    close: () => out.close(),
  };
}

let fromEnv: TimelineFile | undefined | null = null;

/**
 * A timeline for a request accepted now, or undefined when `PAIR_TIMELINE_FILE` was not set when
 * the first request came (read once).
 */
export function startTimeline(trace: string | string[] | undefined): RequestTimeline | undefined {
  if (fromEnv === null) {
    const path = process.env["PAIR_TIMELINE_FILE"];
    fromEnv = path === undefined || path === "" ? undefined : openTimelineFile(path);
  }
  return fromEnv?.start(trace);
}
