#!/usr/bin/env bash
# The demo in a window: drive the vehicles of assets/vehicles/ with a gamepad or the keyboard.
# Builds Bevy's renderer the first time (tens of minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
DEMO_PACKAGES="libwayland-dev libxkbcommon-dev libvulkan1 mesa-vulkan-drivers libxkbcommon-x11-0 libxcursor1 libxrandr2 libxi6 libx11-xcb1" \
  scripts/setup.sh
cargo run --features demo --example demo -- "$@"
