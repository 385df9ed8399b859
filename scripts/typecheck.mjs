// Type-check every package on its own terms (the pure cores without Node types), then tests.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";

// A package that has no sources yet has nothing to check.
const hasSources = (pkg) =>
  existsSync(`packages/${pkg}/src`) && readdirSync(`packages/${pkg}/src`).length > 0;
const projects = readdirSync("packages")
  .filter((p) => existsSync(`packages/${p}/tsconfig.json`) && hasSources(p))
  .map((p) => `packages/${p}/tsconfig.json`);
projects.push("tsconfig.json");
let failed = 0;
for (const project of projects) {
  try {
    execFileSync("npx", ["tsc", "-p", project], { stdio: "inherit" });
  } catch {
    failed += 1;
    console.error(`typecheck failed: ${project}`);
  }
}
if (failed > 0) process.exit(1);
console.log(`typecheck: ${projects.length} projects clean`);
