/**
 * Seeded randomness for the emulator: a 32-bit string hash (FNV-1a) and the mulberry32 generator.
 * Same seed, same sequence, on every machine: generated text and injected faults replay exactly.
 * Knows nothing of HTTP, models or time.
 */

/** FNV-1a over the UTF-16 code units of `text`, as an unsigned 32-bit integer. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** mulberry32: a tiny, fast generator of floats in [0, 1) from a 32-bit seed. Not for cryptography. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One draw in [0, 1) that depends only on (seed, index, salt): the decision for the index-th
 * request does not depend on which other decisions were drawn before it.
 */
export function unitDraw(seed: number, index: number, salt: number): number {
  const mixed = (seed ^ Math.imul(index + 1, 0x9e3779b1) ^ Math.imul(salt, 0x85ebca6b)) >>> 0;
  return mulberry32(mixed)();
}
