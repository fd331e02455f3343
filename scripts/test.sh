#!/usr/bin/env bash
# Runs the suite inside a private D-Bus session with an unlocked gnome-keyring (a real Secret Service) when the
# machine has them, so the keychain tests meet a real keychain; elsewhere the suite runs as is and they skip.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${CHAT_TEST_IN_KEYRING:-}" ] && command -v dbus-run-session >/dev/null && command -v gnome-keyring-daemon >/dev/null; then
  export CHAT_TEST_IN_KEYRING=1
  # A fresh keyring directory each run: a login keyring left by an earlier run would not unlock with our password.
  XDG_DATA_HOME="$(mktemp -d)"
  export XDG_DATA_HOME
  trap 'rm -rf "$XDG_DATA_HOME"' EXIT
  dbus-run-session -- bash -c '
    eval "$(printf "test-password" | gnome-keyring-daemon --unlock --components=secrets 2>/dev/null)" >/dev/null
    export GNOME_KEYRING_CONTROL SSH_AUTH_SOCK
    exec "$0" "$@"' "$0" "$@"
  exit $?
fi
exec npx vitest run "$@"
