#!/usr/bin/env node
// The `pair` command. PAIR runs from its TypeScript sources through tsx: no build step.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../packages/node/src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
