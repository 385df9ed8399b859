#!/usr/bin/env bash
# Run every test and end with the line CI reads: "N passed, N failed, N skipped".
#
# The credential tests use the real Secret Service. When this shell has none (no
# DBUS_SESSION_BUS_ADDRESS, or nothing owns org.freedesktop.secrets on it), the script starts a
# private session bus that starts an unlocked gnome-keyring on demand, whose files live in a
# throwaway folder, runs the tests against them, and stops both afterwards. Only the two daemons see
# the throwaway XDG dirs; the tests run with this shell's HOME and XDG variables. Daemon logs go to
# the throwaway folder and are printed only when the keyring does not come up or had to be started
# again during the run.
set -u
cd "$(dirname "$0")/.."
export NO_COLOR=1

source scripts/private-keyring.sh

if ! has_secret_service; then
  trap stop_private_keyring EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  if ! start_private_keyring; then
    # The credential tests then fail, saying why; the rest of the suite still runs.
    stop_private_keyring
    unset DBUS_SESSION_BUS_ADDRESS
  fi
fi

report=$(mktemp)
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@"
rc=$?
report_keyring_restarts
node -e '
const fs = require("fs");
let r;
try { r = JSON.parse(fs.readFileSync(process.argv[1], "utf8")); } catch { console.log("0 passed, 1 failed"); process.exit(0); }
if (r.numTotalTests === 0) console.error("no test ran");
console.log(`${r.numPassedTests} passed, ${r.numFailedTests + (r.numTotalTests === 0 ? 1 : 0)} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
' "$report"
rm -f "$report"
exit $rc
