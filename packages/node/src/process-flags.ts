/**
 * The V8 flags a PAIR node's process runs with: `bin/pair.js` passes them on its `#!` line (a test
 * keeps the two in step), and the benchmarks start their node processes with them, as `pair` runs.
 * `--max-semi-space-size=2` (MiB): the young generation's semi-spaces otherwise grow to 16 MiB each
 * under load and stay, 59–68 MiB of V8 heap reserved for 21–24 MiB in use; with 2 MiB the node's RSS
 * at 256 streams went from 180–190 to about 152 MiB (docs/benchmarks.md, node-memory). The collector's
 * share of a busy node's CPU rose from 5 % to 18 %, the CPU per request did not measurably change (see
 * the doc); 4 MiB is the fallback if a quiet run shows otherwise.
 * Must not know: anything about the node itself.
 */

export const PAIR_NODE_FLAGS: readonly string[] = Object.freeze(["--max-semi-space-size=2"]);
