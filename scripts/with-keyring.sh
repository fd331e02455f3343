#!/usr/bin/env bash
# Linux only: runs the given command inside a private D-Bus session with a fresh, unlocked gnome-keyring (a real
# Secret Service), so the keychain tests meet a real keychain. scripts/test.mjs uses it when both programs exist.
set -euo pipefail
export CHAT_TEST_IN_KEYRING=1
# A fresh keyring directory each run: a login keyring left by an earlier run would not unlock with our password.
XDG_DATA_HOME="$(mktemp -d)"
export XDG_DATA_HOME
trap 'rm -rf "$XDG_DATA_HOME"' EXIT
# The daemon runs in the foreground as this session's child, so it is stopped, and has stopped writing into the
# keyring directory, before that directory is removed. Left to daemonize, it outlived the session and could still be
# writing its keyring files while `rm -rf` ran ("Directory not empty").
dbus-run-session --dbus-daemon="$(dirname "$0")/quiet-dbus-daemon.sh" -- bash -c '
  set -u
  announced="$XDG_DATA_HOME/keyring-daemon.env"
  printf "test-password" | gnome-keyring-daemon --foreground --unlock --components=secrets >"$announced" 2>/dev/null &
  daemon=$!
  for _ in $(seq 1 200); do
    grep -q "^GNOME_KEYRING_CONTROL=" "$announced" && break
    kill -0 "$daemon" 2>/dev/null || break
    sleep 0.05
  done
  control="$(sed -n "s/^GNOME_KEYRING_CONTROL=//p" "$announced")"
  if [ -z "$control" ]; then
    echo "with-keyring.sh: gnome-keyring-daemon did not start within 10 s" >&2
    kill "$daemon" 2>/dev/null
    exit 1
  fi
  export GNOME_KEYRING_CONTROL="$control"
  status=0
  "$@" || status=$?
  kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  exit "$status"' bash "$@"
