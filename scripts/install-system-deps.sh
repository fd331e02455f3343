#!/usr/bin/env bash
# Installs the Debian packages the real-component tests use: Chromium, a Secret Service keyring, libsecret for keytar, openssl (test CA), zsh and fish (chat-cli's completion scripts).
set -euo pipefail
pkgs=(chromium gnome-keyring dbus libsecret-1-dev libsecret-tools openssl zsh fish)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
