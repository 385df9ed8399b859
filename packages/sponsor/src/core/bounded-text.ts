/**
 * Reading an upstream's small answer (an inventory, a model list, a model's metadata) with a cap:
 * past `maxBytes` the read stops, the connection is let go, and nothing more is buffered, so an
 * engine or endpoint that answers hundreds of megabytes cannot grow the node's memory.
 * Must not know: what the answer means.
 */

/** Largest probe or metadata answer read from an upstream: model lists are KiB, the router's a few MiB. */
export const PROBE_ANSWER_MAX_BYTES = 16 * 1024 * 1024;

export class AnswerTooLarge extends Error {
  override readonly name = "AnswerTooLarge";
  constructor(readonly maxBytes: number) {
    super(`the answer is larger than ${maxBytes / (1024 * 1024)} MiB`);
  }
}

/** The body as UTF-8 text. @throws AnswerTooLarge once it outgrows `maxBytes` (the body is destroyed) */
export async function boundedText(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  maxBytes: number = PROBE_ANSWER_MAX_BYTES,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      throw new AnswerTooLarge(maxBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString("utf8");
}
