/**
 * A bound on how deeply a request body's JSON nests, checked on the bytes before `JSON.parse`: V8
 * parses 200,000 levels happily, but every walk of the result after it (validation, translation,
 * `JSON.stringify` on the way to an engine) recurses, and a deep enough body overflows the stack.
 * One linear pass, brackets counted outside strings; it does not check that the text is JSON.
 * Must not know: what the body means.
 */

/**
 * Deepest nesting accepted in a request body. A chat request with a tool whose JSON schema nests a
 * dozen levels stays under 30; `JSON.stringify` alone overflows Node 20's default stack between 4,000
 * and 8,000 levels, so 100 leaves room for the walks stacked on top of it.
 */
export const MAX_JSON_DEPTH = 100;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Whether the JSON text nests objects and arrays deeper than `maxDepth` (strings skipped). */
export function jsonNestsDeeperThan(bytes: Uint8Array, maxDepth: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > maxDepth) return true;
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) depth--;
  }
  return false;
}
