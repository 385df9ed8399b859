/**
 * OpenAI's `encoding_format: "base64"` for embeddings: the vector as little-endian float32 bytes,
 * base64-encoded. The openai npm client asks for it by default and decodes it itself, so a reply
 * from an Ollama engine (floats only) must be encoded when the client asked for base64, and a
 * base64 reply from an OpenAI engine decoded for an Ollama client.
 *
 * Must not know: requests, responses, HTTP.
 */

export function encodeFloat32Base64(vector: readonly number[]): string {
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  vector.forEach((value, index) => view.setFloat32(index * 4, value, true));
  let binary = "";
  const step = 0x8000;
  for (let at = 0; at < bytes.length; at += step) {
    binary += String.fromCharCode(...bytes.subarray(at, at + step));
  }
  return btoa(binary);
}

/** Base64 float32 → numbers; invalid base64 gives an empty vector. A trailing partial float is ignored. */
export function decodeFloat32Base64(text: string): number[] {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return [];
  }
  const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
  const view = new DataView(bytes.buffer);
  const out: number[] = [];
  for (let at = 0; at + 4 <= bytes.length; at += 4) out.push(view.getFloat32(at, true));
  return out;
}

/**
 * An OpenAI embeddings reply with every float vector base64-encoded: for a client that asked for
 * base64 from an engine that answered floats (the openai SDK would decode floats into garbage).
 */
export function withBase64Embeddings(reply: unknown): unknown {
  const data = (reply as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return reply;
  return {
    ...(reply as Record<string, unknown>),
    data: data.map((item: unknown) => {
      const vector = (item as { embedding?: unknown } | null)?.embedding;
      return Array.isArray(vector) && vector.every((x) => typeof x === "number")
        ? { ...(item as Record<string, unknown>), embedding: encodeFloat32Base64(vector) }
        : item;
    }),
  };
}

/** An OpenAI embedding, floats or base64, as floats. */
export function floatsOf(embedding: readonly number[] | string): number[] {
  return typeof embedding === "string" ? decodeFloat32Base64(embedding) : [...embedding];
}
