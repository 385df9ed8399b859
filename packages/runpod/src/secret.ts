/**
 * The API key as a value that does not print: the transport accepts anything with `reveal()`
 * (PAIR's own Redacted fits), and offers RedactedString for callers that have only a string.
 * `toString`, `toJSON` and `util.inspect` show a label, never the key.
 * Must not know: where the key comes from (OS credential store, environment, test).
 */

import { inspect } from "node:util";

export interface SecretString {
  /** The secret itself; called only where it goes into the Authorization header. */
  reveal(): string;
}

export class RedactedString implements SecretString {
  readonly #value: string;
  readonly #label: string;

  constructor(value: string, label = "secret") {
    this.#value = value;
    this.#label = `[redacted ${label}]`;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return this.#label;
  }

  toJSON(): string {
    return this.#label;
  }

  [inspect.custom](): string {
    return this.#label;
  }
}
