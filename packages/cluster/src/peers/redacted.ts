/**
 * A secret as a type: the value is reachable only through `reveal()`; printing, string conversion,
 * JSON and `util.inspect` show a label instead. Used for the node's private key.
 * Must not know: what the secret is for.
 */

import { inspect } from "node:util";

export class Redacted<T> {
  readonly #value: T;
  readonly #label: string;

  constructor(value: T, label: string) {
    this.#value = value;
    this.#label = `[redacted ${label}]`;
  }

  /** The secret itself. Call it only where the secret is handed to the code that uses it. */
  reveal(): T {
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
