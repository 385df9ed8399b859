/**
 * Puts a generated block into a markdown document between a begin and an end marker, leaving the
 * hand-written text around it alone (each benchmark owns one pair of markers, in docs/performance.md
 * or bench/results.md).
 * Must not know: what the block says, which benchmark wrote it.
 */

export interface Markers {
  readonly begin: string;
  readonly end: string;
}

/**
 * `doc` with `block` between `markers` (replacing what was there). Without the markers (or without a
 * document), the marked block is appended at the end.
 */
export function spliceBetween(doc: string | undefined, block: string, markers: Markers): string {
  const wrapped = `${markers.begin}\n\n${block}\n\n${markers.end}`;
  if (doc === undefined) return `# Benchmarks\n\n${wrapped}\n`;
  const begin = doc.indexOf(markers.begin);
  const end = doc.indexOf(markers.end, begin);
  if (begin < 0 || end < begin) return `${doc.trimEnd()}\n\n${wrapped}\n`;
  return doc.slice(0, begin) + wrapped + doc.slice(end + markers.end.length);
}
