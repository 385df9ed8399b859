import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Tests run the TypeScript sources of every workspace package directly (no build step).
const packages = readdirSync(new URL("./packages", import.meta.url));
const alias = packages.map((name) => ({
  find: new RegExp(`^@pair/${name}$`),
  replacement: fileURLToPath(new URL(`./packages/${name}/src/index.ts`, import.meta.url)),
}));

export default defineConfig({
  resolve: { alias },
  test: {
    include: ["packages/*/test/**/*.test.ts", "bench/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // mDNS never leaves the machine in a test: a node that runs it without being told on which
    // network (mdns-beacon.ts) uses these, so it talks on loopback only (stack-notes.md §8).
    env: { PAIR_MDNS_INTERFACE: "127.0.0.1", PAIR_MDNS_BIND: "0.0.0.0" },
  },
});
