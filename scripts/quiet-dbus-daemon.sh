#!/usr/bin/env bash
# dbus-daemon for scripts/with-keyring.sh, without the one line it prints when run unprivileged: it cannot raise
# its file-descriptor limit ("Failed to set fd limit"), which a test run's short private session never needs.
# Every other line of its stderr passes through.
# The filter closes the descriptors dbus-run-session passed (--print-address <fd>): it waits for their end.
exec dbus-daemon "$@" 2> >(
  for fd in 3 4 5 6 7 8 9; do eval "exec $fd>&-"; done
  exec grep -v --line-buffered "Failed to set fd limit" >&2
)
