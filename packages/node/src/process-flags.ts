/**
 * The V8 flags and the environment a PAIR node's process runs with: `bin/pair.js` passes them on its
 * `#!` line (a test keeps the two in step), and the benchmarks start their node processes with them,
 * as `pair` runs.
 *
 * `--expose-gc`: gives the node V8's `gc()`, which the idle collector (src/memory/) calls once when
 * the node goes idle after a load, so the young generation the load grew is given back. It adds the
 * one global function and nothing on the request path.
 *
 * `--heap-growing-percent=100`: after each full collection the old generation may double before V8
 * marks again. Left to choose, V8 picks a smaller factor for the node's small live heap and, under 64
 * paced streams, ran full collections back to back, whose pauses were the first chunk's p99. It costs
 * about one live heap more at the peak.
 *
 * Not here: a capped young generation (`--max-semi-space-size`) lowers the RSS but costs a third to a
 * half more CPU per request.
 *
 * `MALLOC_ARENA_MAX=1` (PAIR_NODE_ENV; glibc reads it when the process starts, so it can only come
 * from the command line, never from the running node): one malloc arena for every thread, so memory
 * V8's worker threads free is reused instead of kept in arenas of their own: a lower peak RSS under
 * load, at no CPU cost measured. Other platforms' allocators ignore it.
 *
 * The measurements behind each: docs/performance.md, "Settings the measurements decided".
 * Must not know: anything about the node itself.
 */

export const PAIR_NODE_FLAGS: readonly string[] = Object.freeze([
  "--expose-gc",
  "--heap-growing-percent=100",
]);

/** Environment variables a PAIR node's process starts with (see above): set on `bin/pair.js`'s `#!` line. */
export const PAIR_NODE_ENV: Readonly<Record<string, string>> = Object.freeze({ MALLOC_ARENA_MAX: "1" });
