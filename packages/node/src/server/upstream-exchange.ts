/**
 * One attempt's exchange with an upstream, for forward.ts: the request sent through undici's
 * dispatch handler, its status and headers, its first bytes, then the rest pumped to the client with
 * backpressure (the upstream's parser is paused while the client drains), or collected whole (error
 * bodies, non-streamed replies). No stream object per request, no promise per chunk: each chunk undici
 * parses is one call here, not a Readable's push, buffer and read (about a fifth of the node's
 * allocations under load went to undici's response Readable).
 * Must not know: upstreams, failover, history, what the bytes mean.
 */

import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { EventEmitter } from "node:events";
import type { Dispatcher } from "undici";

/** An upstream's status and headers (a 1xx is skipped). */
export interface UpstreamHead {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
}

/** What the caller aborts an attempt with: an emitter of `abort` with its `reason` (AttemptAbort). */
export interface AbortSource extends EventEmitter {
  readonly aborted: boolean;
  readonly reason: unknown;
}

/**
 * Bytes parsed before anyone takes them (between `first()` and `pump()`) are kept up to this much;
 * beyond it the upstream's parser is paused, so an upstream cannot grow the node's memory.
 */
const QUEUE_LIMIT_BYTES = 64 * 1024;

interface Waiter<T> {
  resolve(value: T): void;
  reject(e: Error): void;
}

/**
 * One exchange per attempt: `start()`, then `first()` and `pump()` (a streamed or non-streamed
 * reply), or `collect()` / `discard()` (an error or warming reply), then `close()` (idempotent: it
 * aborts the request if its reply was not read to the end). Listeners are bound once, here.
 */
export class UpstreamExchange implements Dispatcher.DispatchHandler {
  readonly #res: ServerResponse;
  readonly #abortSource: AbortSource;
  #controller: Dispatcher.DispatchController | undefined = undefined;
  #ended = false;
  #error: Error | undefined = undefined;
  /** Chunks parsed with nobody to take them yet; the parser pauses past QUEUE_LIMIT_BYTES. */
  #queued: Buffer[] = [];
  #queuedBytes = 0;
  #head: Waiter<UpstreamHead> | undefined = undefined;
  #first: Waiter<Buffer | undefined> | undefined = undefined;
  #done: Waiter<"ended" | "closed"> | undefined = undefined;
  #sink: ((chunk: Buffer) => boolean | void) | undefined = undefined;
  #onEnd: (() => void) | undefined = undefined;
  #draining = false;
  #watchingClient = false;
  readonly #onAbort = this.#aborted.bind(this);
  readonly #onDrain = this.#drain.bind(this);
  readonly #onClose = this.#clientClosed.bind(this);

  constructor(res: ServerResponse, abortSource: AbortSource) {
    this.#res = res;
    this.#abortSource = abortSource;
  }

  /** Sends the request; resolves with the reply's status and headers, rejects if none came. */
  start(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions): Promise<UpstreamHead> {
    if (this.#abortSource.aborted) return Promise.reject(asError(this.#abortSource.reason));
    this.#abortSource.once("abort", this.#onAbort);
    const head = new Promise<UpstreamHead>((resolve, reject) => (this.#head = { resolve, reject }));
    dispatcher.dispatch(options, this);
    return head;
  }

  /** The first bytes of the body (all parsed so far), or undefined if it ended empty. */
  first(): Promise<Buffer | undefined> {
    if (this.#queued.length > 0) return Promise.resolve(this.#takeQueued());
    if (this.#error !== undefined) return Promise.reject(this.#error);
    if (this.#ended) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => (this.#first = { resolve, reject }));
  }

  /**
   * Feed the rest of the body to `onChunk` with backpressure (a false return pauses the upstream
   * until the client drains). Resolves "ended" at the body's end, "closed" if the client went away.
   * `onEnd`, if given, is called at the body's end in the same tick as its last chunk (before the
   * promise settles, a microtask later), so that what ends the client's reply can leave in the same
   * write as the last chunk; it is not called when the body ends otherwise.
   */
  pump(onChunk: (chunk: Buffer) => boolean | void, onEnd?: () => void): Promise<"ended" | "closed"> {
    this.#sink = onChunk;
    this.#onEnd = onEnd;
    this.#res.once("close", this.#onClose);
    this.#watchingClient = true;
    this.#flush();
    if (this.#error !== undefined && this.#queued.length === 0) {
      this.#unwatchClient();
      return Promise.reject(this.#error);
    }
    if (this.#ended && this.#queued.length === 0 && !this.#draining) {
      this.#unwatchClient();
      const failed = callOnEnd(this.#takeOnEnd());
      return failed === undefined ? Promise.resolve("ended") : Promise.reject(failed);
    }
    return new Promise((resolve, reject) => (this.#done = { resolve, reject }));
  }

  /**
   * The whole body (an error reply's, say), without watching the client. Past `maxBytes` the request
   * is aborted at once (its connection with it) and this rejects with UpstreamBodyTooLarge.
   */
  async collect(maxBytes = Infinity): Promise<Buffer> {
    const body = new CappedBody(this, maxBytes);
    this.#sink = (chunk) => body.push(chunk);
    this.#flush();
    // `over` also when the body had ended already (all of it queued): the abort then fails nothing.
    if (!body.over && this.#error !== undefined) throw this.#error;
    if (!body.over && !this.#ended)
      await new Promise<"ended" | "closed">((resolve, reject) => (this.#done = { resolve, reject }));
    if (body.over) throw new UpstreamBodyTooLarge(maxBytes);
    return Buffer.concat(body.chunks);
  }

  /** Reads the body to its end and drops it (keeps the connection for the next request). */
  async discard(maxBytes = Infinity): Promise<void> {
    await this.collect(maxBytes).catch(() => undefined);
  }

  /** Fails the exchange with `error` now: the request is aborted, whatever waits rejects with it. */
  abort(error: Error): void {
    this.#fail(error, true);
  }

  /** Ends the exchange: aborts the request if its reply was not read to the end. Idempotent. */
  close(): void {
    this.#abortSource.off("abort", this.#onAbort);
    this.#unwatchClient();
    if (!this.#ended && this.#error === undefined)
      this.#fail(new Error("the attempt ended before its reply"), true);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    // Aborted while waiting for a connection: undici is told now.
    if (this.#error !== undefined) controller.abort(this.#error);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    if (statusCode < 200) return;
    const head = this.#head;
    this.#head = undefined;
    head?.resolve({ statusCode, headers });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const sink = this.#sink;
    if (sink !== undefined && !this.#draining && this.#queued.length === 0) {
      if (sink(chunk) === false) this.#pause(controller);
      return;
    }
    const first = this.#first;
    if (first !== undefined) {
      this.#first = undefined;
      first.resolve(chunk);
      return;
    }
    // Nobody takes bytes yet (between first() and pump()), or the client is draining.
    this.#queued.push(chunk);
    this.#queuedBytes += chunk.length;
    if (sink !== undefined && !this.#draining) this.#flush();
    else if (this.#queuedBytes >= QUEUE_LIMIT_BYTES) controller.pause();
  }

  onResponseEnd(): void {
    this.#ended = true;
    this.#abortSource.off("abort", this.#onAbort);
    const first = this.#first;
    if (first !== undefined) {
      this.#first = undefined;
      first.resolve(undefined);
      return;
    }
    if (this.#queued.length === 0 && !this.#draining) this.#finish("ended");
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#fail(error, false);
  }

  #aborted(): void {
    this.#fail(asError(this.#abortSource.reason), true);
  }

  /** Rejects whatever waits; with `abortRequest`, tells undici too (it then calls back, ignored). */
  #fail(error: Error, abortRequest: boolean): void {
    if (this.#error !== undefined || this.#ended) return;
    this.#error = error;
    this.#abortSource.off("abort", this.#onAbort);
    if (abortRequest) this.#controller?.abort(error);
    const head = this.#head;
    const first = this.#first;
    const done = this.#done;
    this.#head = this.#first = this.#done = undefined;
    this.#onEnd = undefined;
    this.#unwatchClient();
    head?.reject(error);
    first?.reject(error);
    done?.reject(error);
  }

  #pause(controller: Dispatcher.DispatchController): void {
    this.#draining = true;
    controller.pause();
    this.#res.once("drain", this.#onDrain);
  }

  #drain(): void {
    this.#draining = false;
    this.#flush();
  }

  /** Hands queued chunks to the sink; resumes the upstream when they are all taken. */
  #flush(): void {
    const sink = this.#sink;
    if (sink === undefined) return;
    while (this.#queued.length > 0) {
      const chunk = this.#takeQueued();
      if (sink(chunk) === false && this.#controller !== undefined) {
        this.#pause(this.#controller);
        return;
      }
    }
    if (this.#error !== undefined) return;
    if (this.#ended) {
      if (this.#done !== undefined) this.#finish("ended");
      return;
    }
    if (this.#controller?.paused === true) this.#controller.resume();
  }

  #takeQueued(): Buffer {
    const queued = this.#queued;
    const chunk = queued.length === 1 ? queued[0]! : Buffer.concat(queued);
    this.#queued = [];
    this.#queuedBytes = 0;
    return chunk;
  }

  #finish(how: "ended" | "closed"): void {
    const done = this.#done;
    const onEnd = this.#takeOnEnd();
    this.#done = undefined;
    this.#sink = undefined;
    this.#unwatchClient();
    const failed = how === "ended" ? callOnEnd(onEnd) : undefined;
    if (failed === undefined) done?.resolve(how);
    else done?.reject(failed);
  }

  #takeOnEnd(): (() => void) | undefined {
    const onEnd = this.#onEnd;
    this.#onEnd = undefined;
    return onEnd;
  }

  #clientClosed(): void {
    this.#watchingClient = false;
    this.#finish("closed");
  }

  #unwatchClient(): void {
    if (this.#draining) this.#res.off("drain", this.#onDrain);
    this.#draining = false;
    if (!this.#watchingClient) return;
    this.#watchingClient = false;
    this.#res.off("close", this.#onClose);
  }
}

/** An upstream's non-streamed reply or error body grew past the node's cap. */
export class UpstreamBodyTooLarge extends Error {
  constructor(readonly limitBytes: number) {
    super(`the reply is larger than ${limitBytes} bytes`);
  }
}

/**
 * A body kept up to `maxBytes`: the chunk that goes past aborts the exchange at once (its connection
 * with it) and everything kept is dropped.
 */
export class CappedBody {
  readonly chunks: Buffer[] = [];
  #bytes = 0;
  #over = false;

  constructor(
    readonly exchange: UpstreamExchange,
    readonly maxBytes: number,
  ) {}

  get over(): boolean {
    return this.#over;
  }

  push(chunk: Buffer): void {
    if (this.#over) return;
    this.#bytes += chunk.length;
    if (this.#bytes <= this.maxBytes) return void this.chunks.push(chunk);
    this.#over = true;
    this.chunks.length = 0;
    this.exchange.abort(new UpstreamBodyTooLarge(this.maxBytes));
  }
}

/** Calls `onEnd`; what it throws is returned, for the pump's promise to reject with. */
function callOnEnd(onEnd: (() => void) | undefined): Error | undefined {
  try {
    onEnd?.();
    return undefined;
  } catch (cause) {
    return asError(cause);
  }
}

function asError(reason: unknown): Error {
  if (reason instanceof Error) return reason;
  return new Error(typeof reason === "string" ? reason : "the attempt was aborted");
}
