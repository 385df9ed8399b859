/**
 * `GET /pair/v1/events`: Server-Sent Events telling the dashboard that something it shows changed, so
 * it asks again at once instead of waiting for its next poll. Level-triggered: `check()` (run every
 * `checkMs` by the node, and right after an admin change) compares a fingerprint of each topic's
 * snapshot (`nodes`, `jobs`, `rented`) with the last one and sends one `change` event naming the
 * topics that moved. The events carry no data beyond topic names (the views read the admin API as
 * ever, under the same authentication). With no stream open, `check()` looks at nothing (the
 * snapshots cost the node a JSON of every running workload and more, twice a second, for nobody):
 * the first stream to open takes the baseline. A comment line every `heartbeatMs` keeps proxies and the
 * browser from timing the stream out; a client that goes away is forgotten at once.
 * Must not know: who may connect (the admin API checked that), what the snapshots hold.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { SYSTEM_TIMERS, type Timers } from "@pair/cluster";

export interface LiveEventsOptions {
  /** Each topic's current state; compared by its JSON (with `ignoredKeys` left out). */
  readonly sources: Readonly<Record<string, () => unknown>>;
  /** Keys whose values change without anything worth showing (`last_seen`, `elapsed_s`). */
  readonly ignoredKeys?: readonly string[];
  /** Time between heartbeat comments (default 15 s). */
  readonly heartbeatMs?: number;
  /** Most streams open at once (default 32); one more is refused with 503. */
  readonly maxClients?: number;
  /** The heartbeat's repeating timer (default: the system timers). */
  readonly timers?: Pick<Timers, "every">;
}

/** Stable codes of a refused stream (docs/errors.md lists them). */
export const LIVE_EVENTS_ERROR_CODES = ["event_streams_full"] as const;

export const DEFAULT_HEARTBEAT_MS = 15_000;
export const DEFAULT_MAX_EVENT_CLIENTS = 32;
/** What the browser waits before reconnecting a dropped stream. */
export const EVENTS_RETRY_MS = 2_000;

export class LiveEvents {
  readonly #o: LiveEventsOptions;
  readonly #clients = new Set<ServerResponse>();
  readonly #last = new Map<string, string>();
  readonly #ignored: ReadonlySet<string>;
  readonly #maxClients: number;
  #heartbeat: { cancel(): void } | undefined;
  #closed = false;

  constructor(options: LiveEventsOptions) {
    const max = options.maxClients ?? DEFAULT_MAX_EVENT_CLIENTS;
    const beat = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`maxClients: expected ≥ 1, got ${max}`);
    if (!(beat >= 10)) throw new RangeError(`heartbeatMs: expected ≥ 10, got ${beat}`);
    this.#o = options;
    this.#maxClients = max;
    this.#ignored = new Set(options.ignoredKeys ?? []);
  }

  /** Streams open now. */
  get clients(): number {
    return this.#clients.size;
  }

  /** Look at every topic; send one event naming those that changed. The topics changed. */
  check(): string[] {
    // Nobody to tell: no look (the first stream to open takes a new baseline).
    if (this.#clients.size === 0) return [];
    const topics = this.#changedTopics();
    if (topics.length > 0) this.#send(`event: change\ndata: ${JSON.stringify({ topics })}\n\n`);
    return topics;
  }

  /** Serve one stream (the caller checked the method, path and authentication). */
  serve(req: IncomingMessage, res: ServerResponse): void {
    req.resume();
    if (this.#closed || this.#clients.size >= this.#maxClients) {
      const text = JSON.stringify({
        error: {
          message: this.#closed
            ? "the node is shutting down"
            : `too many event streams open (${this.#maxClients}); close a dashboard tab`,
          type: "server_error",
          code: LIVE_EVENTS_ERROR_CODES[0],
        },
      });
      res.writeHead(503, { "content-type": "application/json", "retry-after": "5" });
      res.end(text);
      return;
    }
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    res.write(`retry: ${EVENTS_RETRY_MS}\nevent: ready\ndata: {}\n\n`);
    // The first stream's look sets the baseline: nothing is "changed" before anyone saw anything.
    if (this.#clients.size === 0) {
      this.#last.clear();
      this.#changedTopics();
    }
    this.#clients.add(res);
    const forget = () => {
      this.#clients.delete(res);
      if (this.#clients.size === 0) this.#stopHeartbeat();
    };
    // The response's close is the connection's end (the request's fires once its body is read).
    res.on("close", forget);
    this.#heartbeat ??= (this.#o.timers ?? SYSTEM_TIMERS).every(
      () => this.#send(": heartbeat\n\n"),
      this.#o.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    );
  }

  /** End every stream; refuse new ones. */
  close(): void {
    this.#closed = true;
    this.#stopHeartbeat();
    for (const res of this.#clients) res.end();
    this.#clients.clear();
  }

  #stopHeartbeat(): void {
    this.#heartbeat?.cancel();
    this.#heartbeat = undefined;
  }

  #send(text: string): void {
    for (const res of this.#clients) if (!res.writableEnded) res.write(text);
  }

  #changedTopics(): string[] {
    const changed: string[] = [];
    for (const [topic, read] of Object.entries(this.#o.sources)) {
      let print: string;
      try {
        print = JSON.stringify(read(), (key, value: unknown) => (this.#ignored.has(key) ? undefined : value));
      } catch (cause) {
        print = `unreadable: ${String(cause)}`;
      }
      if (this.#last.get(topic) !== print) {
        if (this.#last.has(topic)) changed.push(topic);
        this.#last.set(topic, print);
      }
    }
    return changed;
  }
}
