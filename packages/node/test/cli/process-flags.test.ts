// `pair` runs with PAIR_NODE_FLAGS: bin/pair.js passes exactly those on its `#!` line (the
// benchmarks start their nodes with the same list), and node accepts them.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { PAIR_NODE_FLAGS } from "../../src/process-flags.js";

const PAIR_BIN = fileURLToPath(new URL("../../../../bin/pair.js", import.meta.url));

it("bin/pair.js starts node with PAIR_NODE_FLAGS, which node accepts", () => {
  const shebang = readFileSync(PAIR_BIN, "utf8").split("\n")[0];
  expect(shebang).toBe(
    PAIR_NODE_FLAGS.length === 0
      ? "#!/usr/bin/env node"
      : `#!/usr/bin/env -S node ${PAIR_NODE_FLAGS.join(" ")}`,
  );
  expect(
    execFileSync(process.execPath, [...PAIR_NODE_FLAGS, "-e", "console.log('ok')"], { encoding: "utf8" }),
  ).toBe("ok\n");
});
