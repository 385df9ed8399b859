#!/usr/bin/env -S node --max-semi-space-size=2
// The `pair` command. PAIR runs from its TypeScript sources through tsx: no build step. The V8 flags
// on the first line are PAIR_NODE_FLAGS (packages/node/src/process-flags.ts; a test keeps them in step).
import { register } from "tsx/esm/api";

register();
const { main } = await import("../packages/node/src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
