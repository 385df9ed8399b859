#!/usr/bin/env node
// The `pair` command. PAIR runs from its TypeScript sources through tsx: no build step. V8 flags, if
// any, go on the first line as `#!/usr/bin/env -S node FLAGS`: PAIR_NODE_FLAGS (packages/node/src/process-flags.ts).
import { register } from "tsx/esm/api";

register();
const { main } = await import("../packages/node/src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
