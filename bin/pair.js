#!/usr/bin/env -S MALLOC_ARENA_MAX=1 node --expose-gc --heap-growing-percent=100
// The `pair` command. It runs dist/pair.mjs (the CLI built into one file by `npm run build`, also
// run by `npm ci`) with plain node when that bundle is fresh: built from the sources as they are now
// (bin/bundle-freshness.js). Otherwise it runs the TypeScript sources through tsx, so an edited
// source never runs stale code. PAIR_SHOW_RUNTIME=1 says on stderr which one runs, and why.
// The node's environment and V8 flags go on the first line as `#!/usr/bin/env -S ENV node FLAGS`:
// PAIR_NODE_ENV and PAIR_NODE_FLAGS (packages/node/src/process-flags.ts).
import { fileURLToPath } from "node:url";
import { whyNotFresh } from "./bundle-freshness.js";

const bundle = fileURLToPath(new URL("../dist/pair.mjs", import.meta.url));
const stale = whyNotFresh(bundle);
if (process.env.PAIR_SHOW_RUNTIME === "1")
  process.stderr.write(
    stale === undefined ? `pair: running ${bundle}\n` : `pair: running the sources through tsx: ${stale}\n`,
  );
let main;
if (stale === undefined) ({ main } = await import(bundle));
else {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import("../packages/node/src/cli/main.ts"));
}
process.exitCode = await main(process.argv.slice(2));
