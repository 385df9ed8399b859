#!/usr/bin/env bash
# Run every test and end with the line CI reads: "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
export NO_COLOR=1
report=$(mktemp)
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@"
rc=$?
node -e '
const fs = require("fs");
let r;
try { r = JSON.parse(fs.readFileSync(process.argv[1], "utf8")); } catch { console.log("0 passed, 1 failed"); process.exit(0); }
if (r.numTotalTests === 0) console.error("no test ran");
console.log(`${r.numPassedTests} passed, ${r.numFailedTests + (r.numTotalTests === 0 ? 1 : 0)} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
' "$report"
rm -f "$report"
exit $rc
