#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine with only Rust lacks for this project.
# Safe to run repeatedly: it only installs packages that are missing.
set -euo pipefail

# DEMO_PACKAGES adds what the demo needs to open a window (see scripts/demo.sh).
packages=(pkg-config libudev-dev ${DEMO_PACKAGES:-})
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust 1.95 (https://rustup.rs) and retry" >&2
  exit 1
fi
