#!/usr/bin/env bash
# Run every test and end with the line CI reads: "N passed, N failed, N skipped".
#
# The credential tests use the real Secret Service. When this shell has none (no
# DBUS_SESSION_BUS_ADDRESS, or nothing owns org.freedesktop.secrets on it), the script starts a
# private session bus and an unlocked gnome-keyring whose files live in a throwaway folder, runs the
# tests against them, and stops both afterwards. Only the two daemons see the throwaway XDG dirs; the
# tests run with this shell's HOME and XDG variables. Daemon logs go to the throwaway folder and are
# printed only when the keyring does not come up.
set -u
cd "$(dirname "$0")/.."
export NO_COLOR=1

KEYRING_PACKAGES="dbus dbus-x11 gnome-keyring"

has_secret_service() {
  [ -n "${DBUS_SESSION_BUS_ADDRESS:-}" ] || return 1
  command -v dbus-send >/dev/null 2>&1 || return 1
  dbus-send --session --reply-timeout=2000 --print-reply --dest=org.freedesktop.DBus / \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true"
}

keyring_dir=""
bus_pid=""
keyring_pid=""

stop_private_keyring() {
  local pid
  for pid in $keyring_pid $bus_pid; do
    kill "$pid" 2>/dev/null
    # Wait (bounded) until it is gone; the bus was forked away, so `wait` cannot reap it.
    for _ in $(seq 1 50); do
      [ -e "/proc/$pid" ] && ! grep -q '^.*) Z ' "/proc/$pid/stat" 2>/dev/null || break
      sleep 0.02
    done
  done
  [ -n "$keyring_pid" ] && wait "$keyring_pid" 2>/dev/null
  [ -n "$keyring_dir" ] && rm -rf "$keyring_dir"
  keyring_pid="" bus_pid="" keyring_dir=""
}

start_private_keyring() {
  local missing="" tool
  for tool in dbus-daemon dbus-send gnome-keyring-daemon; do
    command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
  done
  if [ -n "$missing" ]; then
    echo "scripts/test.sh: no Secret Service for the credential tests and missing:$missing." >&2
    echo "  Install the Debian packages: apt-get install -y --no-install-recommends $KEYRING_PACKAGES" >&2
    echo "  (the credential tests will fail until then; the rest of the suite runs)" >&2
    return 1
  fi
  keyring_dir=$(mktemp -d "${TMPDIR:-/tmp}/pair-test-keyring.XXXXXX") || return 1
  mkdir -m 0700 "$keyring_dir/run" "$keyring_dir/data"
  local daemon_env=(env "XDG_DATA_HOME=$keyring_dir/data" "XDG_RUNTIME_DIR=$keyring_dir/run")
  local out
  # The bus gets the throwaway dirs too: a keyring it would start on demand uses them.
  out=$("${daemon_env[@]}" dbus-daemon --session --fork --nopidfile --print-address=1 --print-pid=1 \
    --address="unix:path=$keyring_dir/run/bus" 2>"$keyring_dir/dbus.log") || {
    echo "scripts/test.sh: could not start a D-Bus session bus:" >&2
    cat "$keyring_dir/dbus.log" >&2
    return 1
  }
  export DBUS_SESSION_BUS_ADDRESS
  DBUS_SESSION_BUS_ADDRESS=$(printf '%s\n' "$out" | sed -n 1p)
  bus_pid=$(printf '%s\n' "$out" | sed -n 2p)
  # --unlock reads the password from stdin and creates the "login" keyring unlocked.
  printf '%s' "pair-test-keyring" | "${daemon_env[@]}" gnome-keyring-daemon --foreground --unlock \
    --components=secrets >"$keyring_dir/keyring.out" 2>"$keyring_dir/keyring.log" &
  keyring_pid=$!
  for _ in $(seq 1 100); do
    has_secret_service && return 0
    sleep 0.05
  done
  echo "scripts/test.sh: gnome-keyring did not come up on the private session bus within 5 s:" >&2
  cat "$keyring_dir/dbus.log" "$keyring_dir/keyring.log" >&2
  return 1
}

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
node -e '
const fs = require("fs");
let r;
try { r = JSON.parse(fs.readFileSync(process.argv[1], "utf8")); } catch { console.log("0 passed, 1 failed"); process.exit(0); }
if (r.numTotalTests === 0) console.error("no test ran");
console.log(`${r.numPassedTests} passed, ${r.numFailedTests + (r.numTotalTests === 0 ? 1 : 0)} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
' "$report"
rm -f "$report"
exit $rc
