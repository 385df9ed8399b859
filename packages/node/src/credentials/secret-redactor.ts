/**
 * The node's one list of secret values it has read (credentials from the store, the headers it sends
 * upstream) and the scrub applied where text leaves the process: relayed upstream bodies and error
 * messages, rented nodes' reasons, the log. Each secret is known in the forms an upstream could
 * echo it in: raw (which covers `Bearer …`), base64 and base64url — also embedded, as in the
 * base64 of `user:token` — each replaced by REDACTED_MARK.
 * Must not know: where the secrets come from, HTTP, what the text is.
 */

/** What a secret is replaced with. */
export const REDACTED_MARK = "[redacted]";
const MARK_BYTES = Buffer.from(REDACTED_MARK, "utf8");

/**
 * Shorter values are not treated as secrets: scrubbing them would mangle ordinary text, and no
 * provider's token is this short.
 */
export const MIN_SECRET_CHARS = 8;

export class SecretRedactor {
  /** Every form of every secret, longest first (a longer form is replaced before its pieces). */
  #forms: string[] = [];
  #formBytes: Buffer[] = [];
  /** Which bytes begin some form: a chunk's tail is checked only where one of them stands. */
  #firstBytes = new Uint8Array(256);
  #longest = 0;
  readonly #known = new Set<string>();

  /** Remembers `secret` (idempotent); too short a value is ignored. */
  add(secret: string): void {
    const value = secret.trim();
    if (value.length < MIN_SECRET_CHARS || this.#known.has(value)) return;
    this.#known.add(value);
    const forms = new Set(this.#forms);
    for (const form of formsOf(value)) forms.add(form);
    this.#forms = [...forms].sort((a, b) => b.length - a.length);
    this.#formBytes = this.#forms.map((f) => Buffer.from(f, "utf8"));
    for (const f of this.#formBytes) {
      this.#firstBytes[f[0]!] = 1;
      this.#longest = Math.max(this.#longest, f.length);
    }
  }

  /** Whether any secret is known (when not, every scrub is the identity). */
  get active(): boolean {
    return this.#forms.length > 0;
  }

  /** The longest form, in bytes: what a stream must hold back at a chunk's end. */
  get longestBytes(): number {
    return this.#longest;
  }

  redact(text: string): string {
    let out = text;
    for (const form of this.#forms) if (out.includes(form)) out = out.split(form).join(REDACTED_MARK);
    return out;
  }

  /**
   * The same bytes when they hold no secret (no copy); else a scrubbed copy. Bytes, not text: a
   * chunk may end inside a multi-byte character, which decoding would spoil.
   */
  redactBytes(bytes: Buffer): Buffer {
    let out = bytes;
    for (const form of this.#formBytes) {
      let at = out.indexOf(form);
      if (at < 0) continue;
      const parts: Buffer[] = [];
      let from = 0;
      while (at >= 0) {
        parts.push(out.subarray(from, at), MARK_BYTES);
        from = at + form.length;
        at = out.indexOf(form, from);
      }
      parts.push(out.subarray(from));
      out = Buffer.concat(parts);
    }
    return out;
  }

  /** A scrub for one streamed body: chunk-boundary safe (a secret split across chunks is caught). */
  stream(): StreamRedactor {
    return new StreamRedactor(this);
  }

  /**
   * How many bytes at the end of `bytes` begin some form (they must wait for the next chunk). From
   * the earliest position a form could start, so the first match is the longest; only positions
   * holding a form's first byte are compared (a per-form scan of every length was the rented
   * route's largest cost of its own at 256 streams).
   */
  pendingTail(bytes: Buffer): number {
    const end = bytes.length;
    for (let at = Math.max(0, end - this.#longest + 1); at < end; at++) {
      const first = bytes[at]!;
      if (this.#firstBytes[first] === 0) continue;
      const k = end - at;
      for (const form of this.#formBytes) {
        if (form.length <= k || form[0] !== first) continue;
        // Byte by byte, no slice: a mismatch is nearly always found at once.
        let j = 1;
        while (j < k && form[j] === bytes[at + j]) j++;
        if (j === k) return k;
      }
    }
    return 0;
  }
}

/**
 * Scrubs a body that arrives in chunks: bytes that could be the start of a secret are held until the
 * next chunk (or the end) shows whether they are. Nothing is held when no secret is known.
 */
export class StreamRedactor {
  readonly #redactor: SecretRedactor;
  #held: Buffer | undefined = undefined;

  constructor(redactor: SecretRedactor) {
    this.#redactor = redactor;
  }

  /** The bytes that may leave now (a translated stream's text is taken as its UTF-8). */
  push(data: Buffer | string): Buffer {
    const chunk = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    if (!this.#redactor.active) return chunk;
    const joined = this.#held === undefined ? chunk : Buffer.concat([this.#held, chunk]);
    const scrubbed = this.#redactor.redactBytes(joined);
    const keep = this.#redactor.pendingTail(scrubbed);
    this.#held = keep === 0 ? undefined : Buffer.from(scrubbed.subarray(scrubbed.length - keep));
    return keep === 0 ? scrubbed : scrubbed.subarray(0, scrubbed.length - keep);
  }

  /** What was held back, at the body's end (a prefix of a secret that never completed). */
  end(): Buffer {
    const held = this.#held;
    this.#held = undefined;
    return held ?? Buffer.alloc(0);
  }
}

/**
 * The raw value, its base64 and base64url, and the middle of its base64 at each of the three byte
 * alignments it can have inside a longer encoded string (`user:token`): the first and last groups
 * mix with the neighbouring bytes, so they are left out.
 */
export function formsOf(value: string): string[] {
  const bytes = Buffer.from(value, "utf8");
  const forms = [value];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
    const whole = offset === 0 ? encoded.replace(/=+$/, "") : encoded.slice(4);
    const middle = whole.slice(0, Math.floor((whole.length - 4) / 4) * 4);
    for (const piece of offset === 0 ? [whole, middle] : [middle]) {
      if (piece.length < MIN_SECRET_CHARS) continue;
      forms.push(piece, piece.replace(/\+/g, "-").replace(/\//g, "_"));
    }
  }
  return [...new Set(forms)];
}
