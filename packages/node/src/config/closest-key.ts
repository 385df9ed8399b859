/**
 * The "did you mean" of an unknown key: the known key at the smallest edit distance, when it is close
 * enough to be a plausible typo (`cold_start` → `cold_start_s`, `rented_node` → `rented_nodes`).
 * Must not know: which keys exist where.
 */

/** Levenshtein distance (insert, delete, substitute), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const current = [i];
    for (let j = 1; j <= t.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (s[i - 1] === t[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[t.length] ?? 0;
}

/** The closest known key, or undefined when none is within a third of the longer name (at least 2). */
export function closestKey(unknown: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(unknown, candidate);
    const allowed = Math.max(2, Math.floor(Math.max(unknown.length, candidate.length) / 3));
    if (distance <= allowed && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}
