#!/usr/bin/env bash
# Smoke test of the demo in a real window under Xvfb with Mesa's software Vulkan: 300 frames of
# scripted driving, then a screenshot (demo_screenshot.png, or the path given) and exit 0.
set -euo pipefail
cd "$(dirname "$0")/.."
DEMO_PACKAGES="xvfb xauth libwayland-dev libxkbcommon-dev libvulkan1 mesa-vulkan-drivers libxkbcommon-x11-0 libxcursor1 libxrandr2 libxi6 libx11-xcb1" \
  scripts/setup.sh
shot="${1:-demo_screenshot.png}"
cargo build --features demo --example demo
xvfb-run -a -s "-screen 0 1280x720x24" \
  cargo run --features demo --example demo -- --smoke 300 --screenshot "$shot"
