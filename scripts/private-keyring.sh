# Functions that give the credential tests a Secret Service of their own: a private D-Bus session
# bus that starts an unlocked gnome-keyring on demand (D-Bus activation), whose files live in a
# throwaway folder. Sourced by scripts/test.sh and by the test that crashes the keyring on purpose
# (packages/node/test/credentials/keyring-crash.test.ts). `start_private_keyring` exports
# DBUS_SESSION_BUS_ADDRESS and sets keyring_dir and bus_pid; `stop_private_keyring` stops both daemons
# and removes the folder. Only the two daemons see the throwaway XDG dirs.

KEYRING_PACKAGES="dbus dbus-x11 gnome-keyring"

has_secret_service() {
  [ -n "${DBUS_SESSION_BUS_ADDRESS:-}" ] || return 1
  command -v dbus-send >/dev/null 2>&1 || return 1
  dbus-send --session --reply-timeout=2000 --print-reply --dest=org.freedesktop.DBus / \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true"
}

keyring_dir=""
bus_pid=""

# The PID of the keyring the bus started last (written by the activation script), or nothing.
keyring_pid() {
  [ -n "$keyring_dir" ] && [ -s "$keyring_dir/keyring.pid" ] && cat "$keyring_dir/keyring.pid"
}

stop_pid() {
  local pid=$1
  kill "$pid" 2>/dev/null
  # Wait (bounded) until it is gone; neither daemon is this shell's child, so `wait` cannot reap it.
  for _ in $(seq 1 50); do
    [ -e "/proc/$pid" ] && ! grep -q '^.*) Z ' "/proc/$pid/stat" 2>/dev/null || break
    sleep 0.02
  done
}

# Says so when gnome-keyring had to be started more than once: it crashed during the run (the
# tests survive that: the bus starts it again on the next call and PAIR retries a call the crash
# cut off), with the end of its log.
report_keyring_restarts() {
  [ -n "$keyring_dir" ] && [ -s "$keyring_dir/starts" ] || return 0
  local starts
  starts=$(wc -l <"$keyring_dir/starts")
  [ "$starts" -gt 1 ] || return 0
  echo "private keyring: gnome-keyring-daemon (the credential tests' Secret Service) was started $starts times;" \
    "it exited $((starts - 1)) time(s) during the run. The end of its log:" >&2
  grep -v '^$' "$keyring_dir/keyring.log" | tail -n 20 >&2
}

stop_private_keyring() {
  local pid
  pid=$(keyring_pid)
  # The bus first: stopped after the keyring, a last call could have it start another one.
  [ -n "$bus_pid" ] && stop_pid "$bus_pid"
  [ -n "$pid" ] && stop_pid "$pid"
  [ -n "$keyring_dir" ] && rm -rf "$keyring_dir"
  bus_pid="" keyring_dir=""
}

# A private session bus that starts an unlocked gnome-keyring on demand (D-Bus activation), so a
# keyring that crashes comes back on the next call, unlocked, with what was stored. gnome-keyring 42
# crashes (SIGTRAP, "g_variant_new: expected GVariant of type 'v'") when a client that is opening
# a session goes away mid-call, which the crash tests do by design. The bus has no other service
# files: the system's would start a second, locked keyring that waits for a desktop prompt.
start_private_keyring() {
  local missing="" tool
  for tool in dbus-daemon dbus-send gnome-keyring-daemon; do
    command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
  done
  if [ -n "$missing" ]; then
    echo "private keyring: no Secret Service for the credential tests and missing:$missing." >&2
    echo "  Install the Debian packages: apt-get install -y --no-install-recommends $KEYRING_PACKAGES" >&2
    echo "  (the credential tests will fail until then; the rest of the suite runs)" >&2
    return 1
  fi
  keyring_dir=$(mktemp -d "${TMPDIR:-/tmp}/pair-test-keyring.XXXXXX") || return 1
  mkdir -m 0700 "$keyring_dir/run" "$keyring_dir/data" "$keyring_dir/services"
  # --unlock reads the password from stdin: it creates the "login" keyring unlocked on the first
  # start and unlocks it on every later one.
  (umask 077 && printf '%s' "pair-test-keyring" >"$keyring_dir/password")
  cat >"$keyring_dir/start-keyring" <<SCRIPT
#!/bin/sh
echo \$\$ >"$keyring_dir/keyring.pid"
date +%T >>"$keyring_dir/starts"
exec gnome-keyring-daemon --foreground --unlock --components=secrets <"$keyring_dir/password" \\
  >>"$keyring_dir/keyring.out" 2>>"$keyring_dir/keyring.log"
SCRIPT
  chmod 0700 "$keyring_dir/start-keyring"
  printf '[D-BUS Service]\nName=org.freedesktop.secrets\nExec=%s\n' "$keyring_dir/start-keyring" \
    >"$keyring_dir/services/org.freedesktop.secrets.service"
  cat >"$keyring_dir/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$keyring_dir/run/bus</listen>
  <auth>EXTERNAL</auth>
  <servicedir>$keyring_dir/services</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
  <!-- The limits of Debian's session.conf: the default ones (256 connections) are a system bus's. -->
  <limit name="max_incoming_bytes">1000000000</limit>
  <limit name="max_outgoing_bytes">1000000000</limit>
  <limit name="max_message_size">1000000000</limit>
  <limit name="service_start_timeout">120000</limit>
  <limit name="auth_timeout">240000</limit>
  <limit name="max_completed_connections">100000</limit>
  <limit name="max_incomplete_connections">10000</limit>
  <limit name="max_connections_per_user">100000</limit>
  <limit name="max_pending_service_starts">10000</limit>
  <limit name="max_names_per_connection">50000</limit>
  <limit name="max_match_rules_per_connection">50000</limit>
  <limit name="max_replies_per_connection">50000</limit>
</busconfig>
CONF
  local out
  # The bus (and so the keyring it starts) gets the throwaway XDG dirs; the tests keep this shell's.
  out=$(env "XDG_DATA_HOME=$keyring_dir/data" "XDG_RUNTIME_DIR=$keyring_dir/run" \
    dbus-daemon --config-file="$keyring_dir/bus.conf" --fork --nopidfile --print-address=1 --print-pid=1 \
    2>"$keyring_dir/dbus.log") || {
    echo "private keyring: could not start a D-Bus session bus:" >&2
    cat "$keyring_dir/dbus.log" >&2
    return 1
  }
  export DBUS_SESSION_BUS_ADDRESS
  DBUS_SESSION_BUS_ADDRESS=$(printf '%s\n' "$out" | sed -n 1p)
  bus_pid=$(printf '%s\n' "$out" | sed -n 2p)
  dbus-send --session --reply-timeout=5000 --print-reply --dest=org.freedesktop.DBus / \
    org.freedesktop.DBus.StartServiceByName string:org.freedesktop.secrets uint32:0 >/dev/null 2>&1
  for _ in $(seq 1 100); do
    has_secret_service && return 0
    sleep 0.05
  done
  echo "private keyring: gnome-keyring did not come up on the private session bus within 10 s:" >&2
  cat "$keyring_dir/dbus.log" "$keyring_dir/keyring.log" >&2
  return 1
}
