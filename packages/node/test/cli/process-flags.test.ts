// `pair` runs with PAIR_NODE_FLAGS: bin/pair.js passes exactly those on its `#!` line (the
// benchmarks start their nodes with the same list), and a node started that way has them in effect.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { PAIR_NODE_FLAGS } from "../../src/process-flags.js";

const PAIR_BIN = fileURLToPath(new URL("../../../../bin/pair.js", import.meta.url));

it("bin/pair.js starts node with PAIR_NODE_FLAGS, and they take effect", () => {
  const shebang = readFileSync(PAIR_BIN, "utf8").split("\n")[0];
  expect(shebang).toBe(`#!/usr/bin/env -S node ${PAIR_NODE_FLAGS.join(" ")}`);
  // The flags as node parses them from that line: the semi-space limit shows in V8's heap spaces.
  const args = shebang!.replace("#!/usr/bin/env -S node ", "").split(" ");
  const newSpaceMiB = execFileSync(
    process.execPath,
    [
      ...args,
      "-e",
      "for (let i = 0, a = []; i < 2e5; i++) a.push({ i }); " +
        "console.log(require('v8').getHeapSpaceStatistics().find((x) => x.space_name === 'new_space').space_size / 1048576)",
    ],
    { encoding: "utf8" },
  );
  expect(Number(newSpaceMiB)).toBeLessThanOrEqual(4);
});
