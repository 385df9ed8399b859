/**
 * CPace's length-value encoding (draft-irtf-cfrg-cpace-21, Appendix A.1): `prepend_len` puts the
 * LEB128 length in front of a string, `lv_cat` does that for each argument and concatenates. Every
 * string the pairing protocol hashes goes through `lvCat`, so no two different inputs hash the same.
 * Must not know: what the strings mean.
 */

/** `prepend_len(data)`: the LEB128 encoding of `data.length`, then `data`. */
export function prependLen(data: Uint8Array): Uint8Array {
  const length: number[] = [];
  let rest = data.length;
  do {
    const low = rest & 0x7f;
    rest = Math.floor(rest / 128);
    length.push(rest > 0 ? low | 0x80 : low);
  } while (rest > 0);
  const out = new Uint8Array(length.length + data.length);
  out.set(length, 0);
  out.set(data, length.length);
  return out;
}

/** `lv_cat(a0, a1, …)`: `prepend_len(a0) || prepend_len(a1) || …`. */
export function lvCat(...parts: readonly Uint8Array[]): Uint8Array {
  return concatBytes(...parts.map(prependLen));
}

/** Plain concatenation (`a || b`), for the places the draft concatenates without lengths. */
export function concatBytes(...parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const encoder = new TextEncoder();

/** UTF-8 bytes of a string (labels, node ids, names, the PIN). */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}
