/**
 * The V8 flags and the environment a PAIR node's process runs with: `bin/pair.js` passes them on its
 * `#!` line (a test keeps the two in step), and the benchmarks start their node processes with them,
 * as `pair` runs.
 *
 * `--expose-gc`: gives the node V8's `gc()`, which the idle collector (src/memory/) calls once when
 * the node goes idle after a load, so the young generation the load grew is given back (RSS 133 →
 * about 100 MiB after 256 streams: docs/benchmarks.md, "Memory, session 5"). It adds the one global
 * function and nothing on the request path.
 *
 * `--heap-growing-percent=100`: after each full collection V8 lets the old generation grow to twice
 * what survived before it starts marking again. Left to choose, V8 picks a smaller factor while its
 * collector looks cheap (about 1.1–1.5× for the node's ~18 MiB live heap), and under 64 paced
 * streams the node then ran a full mark-compact every 100–200 ms, each pausing the event loop 2–15 ms
 * (30 in two runs of bench/proxy-overhead.ts, most in its 64-stream cells: that was the p99 of the
 * first chunk). With it: 7 in the same two runs, none back to back (docs/benchmarks.md, "Session 7").
 * The old generation's peak grows by about what survives (~18 MiB); the idle collector still gives
 * the memory back after a load.
 *
 * Not here: `--max-semi-space-size=2` took the node's RSS at 256 streams from 180–190 to about
 * 152 MiB under tsx, but cost 40–50 % more CPU per request at 0 ms/token (0.36–0.44 ms against
 * 0.25–0.29 ms with V8's default, 2026-11-30 18:17–18:21 at load 1.4–4.4; 4 MiB: 0.39 ms): the
 * young generation keeps its default size (docs/benchmarks.md, "Memory: the young generation").
 *
 * `MALLOC_ARENA_MAX=1` (PAIR_NODE_ENV; glibc reads it when the process starts, so it can only come
 * from the command line, never from the running node): one malloc arena for every thread. By default
 * glibc gives each thread that allocates its own arena, and V8's worker threads (concurrent marking,
 * compilation) grew theirs to 2–11 MB each under a CPU-bound load, then kept the freed memory: 22 MB
 * of 62 MB of malloc'd memory in use by nobody (`malloc_stats()` from gdb, 2026-12-01). With one
 * arena, what a thread frees is reused by the next allocation from any thread: the peak RSS of a node
 * alone under 256 CPU-bound streams for 15 s went from 169–172 to 153 MiB, and the CPU per request
 * did not move (bench/node-cpu.ts with and without it in the same rounds: 0.257 against 0.271 ms
 * CPU-bound, 1.09× against 1.12× the bare relay paced; docs/benchmarks.md, "Session 9"). Other
 * platforms' allocators ignore it.
 * Must not know: anything about the node itself.
 */

export const PAIR_NODE_FLAGS: readonly string[] = Object.freeze([
  "--expose-gc",
  "--heap-growing-percent=100",
]);

/** Environment variables a PAIR node's process starts with (see above): set on `bin/pair.js`'s `#!` line. */
export const PAIR_NODE_ENV: Readonly<Record<string, string>> = Object.freeze({ MALLOC_ARENA_MAX: "1" });
