/**
 * The Hugging Face token as a type: readable only through `reveal()`, masked in `toString`,
 * `toJSON` and `util.inspect`, so it cannot end up in a log, an error or JSON by accident. The
 * transport accepts any object with `reveal()` (the node's credential store type fits).
 * Must not know: where the token is stored.
 */

import { inspect } from "node:util";

/** What the transport needs of a credential. */
export interface RevealableToken {
  reveal(): string;
}

export class HfToken implements RevealableToken {
  readonly #value: string;

  constructor(value: string) {
    if (value.trim() === "") throw new RangeError("HfToken: the token is empty");
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return "[redacted Hugging Face token]";
  }

  toJSON(): string {
    return "[redacted Hugging Face token]";
  }

  [inspect.custom](): string {
    return "[redacted Hugging Face token]";
  }
}
