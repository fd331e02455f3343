#!/usr/bin/env bash
# Linux only: runs the given command inside a private D-Bus session with a fresh, unlocked gnome-keyring (a real
# Secret Service), so the keychain tests meet a real keychain. scripts/test.mjs uses it when both programs exist.
set -euo pipefail
export CHAT_TEST_IN_KEYRING=1
# A fresh keyring directory each run: a login keyring left by an earlier run would not unlock with our password.
XDG_DATA_HOME="$(mktemp -d)"
export XDG_DATA_HOME
trap 'rm -rf "$XDG_DATA_HOME"' EXIT
dbus-run-session --dbus-daemon="$(dirname "$0")/quiet-dbus-daemon.sh" -- bash -c '
  eval "$(printf "test-password" | gnome-keyring-daemon --unlock --components=secrets 2>/dev/null)" >/dev/null
  export GNOME_KEYRING_CONTROL SSH_AUTH_SOCK
  exec "$@"' bash "$@"
