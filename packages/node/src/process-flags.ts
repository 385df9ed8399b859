/**
 * The V8 flags a PAIR node's process runs with: `bin/pair.js` passes them on its `#!` line (a test
 * keeps the two in step), and the benchmarks start their node processes with them, as `pair` runs.
 * `--max-semi-space-size=2` (MiB): the young generation's semi-spaces otherwise grow to 16 MiB each
 * under load and stay, 59–68 MiB of V8 heap reserved for 21–24 MiB in use; with 2 MiB the node's RSS
 * at 256 streams went from 180–190 to about 152 MiB (docs/benchmarks.md, node-memory), with no CPU
 * per request difference measurable on this machine.
 * Must not know: anything about the node itself.
 */

export const PAIR_NODE_FLAGS: readonly string[] = Object.freeze(["--max-semi-space-size=2"]);
