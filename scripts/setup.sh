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
  # Another package manager may hold apt's locks (a fresh machine's automatic updates, or a
  # second of these scripts started beside this one): wait for it rather than fail. The
  # install waits by itself; the update is retried while a lock is what stops it, for up
  # to 15 minutes.
  for try in $(seq 90); do
    if errors=$($sudo apt-get update -qq 2>&1); then
      break
    fi
    echo "$errors" >&2
    if [ "$try" -eq 90 ] || ! grep -q "Could not get lock" <<<"$errors"; then
      exit 1
    fi
    echo "setup: another package manager holds apt's lock; retrying in 10 s"
    sleep 10
  done
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
    "${missing[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust 1.95 (https://rustup.rs) and retry" >&2
  exit 1
fi
