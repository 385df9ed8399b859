/**
 * Reading an upstream's reply body for forward.ts: its first bytes, then the rest pumped to the
 * client with backpressure, with listeners bound once per reader rather than closures per request.
 * Must not know: upstreams, failover, history, what the bytes mean.
 */

import type { ServerResponse } from "node:http";
import type { Readable } from "node:stream";

/**
 * An upstream body's bytes, taken with `read()` on `readable`, never with `data` events: a read takes
 * everything buffered at once, so the many small chunks an engine's chunked reply is parsed into
 * (one per token) leave in one write to the client, not one write (and one HTTP chunk) each.
 * One reader per attempt: `first()`, then `pump()`. Its listeners are bound once, in the
 * constructor, rather than a dozen closures made per request (each also named, under tsx).
 */
export class BodyReader {
  readonly #body: Readable;
  readonly #res: ServerResponse;
  #onChunk: ((chunk: Buffer) => boolean | void) | undefined = undefined;
  /** What the pending `first()` or `pump()` settles; undefined between them (bytes wait in the body). */
  #first: { resolve(chunk: Buffer | undefined): void; reject(e: Error): void } | undefined = undefined;
  #pump: { resolve(how: "ended" | "closed"): void; reject(e: Error): void } | undefined = undefined;
  #draining = false;
  #listening = false;
  readonly #onReadable = this.#readable.bind(this);
  readonly #onEnd = this.#end.bind(this);
  readonly #onError = this.#error.bind(this);
  readonly #onDrain = this.#drain.bind(this);
  readonly #onClose = this.#close.bind(this);

  constructor(body: Readable, res: ServerResponse) {
    this.#body = body;
    this.#res = res;
  }

  /** The first bytes of the body (all it has buffered), or undefined if it ended empty. */
  first(): Promise<Buffer | undefined> {
    const body = this.#body;
    if (body.errored !== null) return Promise.reject(body.errored);
    if (body.readableEnded) return Promise.resolve(undefined);
    const now = body.read() as Buffer | null;
    if (now !== null) return Promise.resolve(now);
    this.#listen();
    return new Promise((resolve, reject) => (this.#first = { resolve, reject }));
  }

  /**
   * Feed the rest of the body to `onChunk` with backpressure (a false return stops reading until the
   * client drains). Resolves "ended" at the body's end, "closed" if the client went away.
   */
  pump(onChunk: (chunk: Buffer) => boolean | void): Promise<"ended" | "closed"> {
    const body = this.#body;
    // The body may have ended or failed already, right after its first bytes.
    if (body.errored !== null) {
      this.#stop();
      return Promise.reject(body.errored);
    }
    if (body.readableEnded) {
      this.#stop();
      return Promise.resolve("ended");
    }
    this.#onChunk = onChunk;
    this.#listen();
    this.#res.once("close", this.#onClose);
    return new Promise((resolve, reject) => {
      this.#pump = { resolve, reject };
      this.#readable();
    });
  }

  #listen(): void {
    if (this.#listening) return;
    this.#listening = true;
    this.#body.on("readable", this.#onReadable);
    this.#body.on("end", this.#onEnd);
    this.#body.on("error", this.#onError);
  }

  #stop(): void {
    this.#body.off("readable", this.#onReadable);
    this.#body.off("end", this.#onEnd);
    this.#body.off("error", this.#onError);
    this.#res.off("drain", this.#onDrain);
    this.#res.off("close", this.#onClose);
    this.#listening = false;
  }

  #readable(): void {
    const first = this.#first;
    if (first !== undefined) {
      const chunk = this.#body.read() as Buffer | null;
      if (chunk === null) return; // nothing yet, or the end (`end` follows)
      this.#first = undefined;
      first.resolve(chunk);
      return;
    }
    // Between first() and pump(), or waiting for the client to drain: the bytes wait in the body.
    if (this.#pump === undefined || this.#draining) return;
    const onChunk = this.#onChunk!;
    for (
      let chunk = this.#body.read() as Buffer | null;
      chunk !== null;
      chunk = this.#body.read() as Buffer | null
    )
      if (onChunk(chunk) === false) {
        this.#draining = true;
        this.#res.once("drain", this.#onDrain);
        return;
      }
  }

  #drain(): void {
    this.#draining = false;
    this.#readable();
  }

  #end(): void {
    const first = this.#first;
    const pump = this.#pump;
    // Ended between first() and pump(): pump() finds `readableEnded`.
    if (first === undefined && pump === undefined) return;
    this.#stop();
    this.#first = this.#pump = undefined;
    if (first !== undefined) first.resolve(undefined);
    else pump?.resolve("ended");
  }

  #error(e: Error): void {
    const first = this.#first;
    const pump = this.#pump;
    // Failed between first() and pump(): kept on the body (`errored`), which pump() reads.
    if (first === undefined && pump === undefined) return;
    this.#stop();
    this.#first = this.#pump = undefined;
    if (first !== undefined) first.reject(e);
    else pump?.reject(e);
  }

  #close(): void {
    const pump = this.#pump;
    this.#stop();
    this.#pump = undefined;
    pump?.resolve("closed");
  }
}
