// Each benchmark's `--write` splices its block between its own markers in one document: the markers
// must be there, once each and in order, or the next `--write` would append a second block at the end.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BATCH_LOAD_MARKERS } from "./batch-load-report.js";
import { COMPARE_MARKERS } from "./compare-report.js";
import type { Markers } from "./doc-splice.js";
import { PEER_HOP_MARKERS } from "./peer-hop-report.js";
import { PEER_TRANSPORT_MARKERS } from "./peer-transport-report.js";
import { BEGIN_MARKER, END_MARKER } from "./report.js";

/** The document each benchmark writes: the `DOC` of compare.ts, batch-load.ts, proxy-overhead.ts, peer-hop.ts and peer-transport.ts. */
const WRITTEN: readonly (readonly [string, string, Markers])[] = [
  ["npm run bench", "docs/performance.md", COMPARE_MARKERS],
  ["batch-load", "docs/performance.md", BATCH_LOAD_MARKERS],
  ["proxy-overhead", "bench/results.md", { begin: BEGIN_MARKER, end: END_MARKER }],
  ["peer-hop", "bench/results.md", PEER_HOP_MARKERS],
  ["peer-transport", "bench/results.md", PEER_TRANSPORT_MARKERS],
];

describe("the documents the benchmarks write into", () => {
  it.each(WRITTEN)("%s: its markers are in %s once each, begin before end", (_name, path, markers) => {
    const doc = readFileSync(new URL(`../${path}`, import.meta.url), "utf8");
    expect(doc.split(markers.begin)).toHaveLength(2);
    expect(doc.split(markers.end)).toHaveLength(2);
    expect(doc.indexOf(markers.begin)).toBeLessThan(doc.indexOf(markers.end));
  });
});
