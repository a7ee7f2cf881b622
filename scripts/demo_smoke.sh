#!/usr/bin/env bash
# Smoke test of the demo in a real window under Xvfb with Mesa's software Vulkan (lavapipe):
# 300 frames of scripted driving (throttle, right, left; then R, Tab and P) with a telemetry
# recording and the debug view, then a screenshot (demo_screenshot.png, or the path given).
# The smoke run renders at half resolution (640x360 pixels, the 1280x720 layout), which
# halves the software renderer's time. The demo checks itself and exits non-zero with
# "smoke run: FAIL: ..." lines unless the vehicle drove more than 5 m, the screenshot is not
# blank (many colours, a HUD that stands out from the sky) and the telemetry CSV has the
# columns examples/plot_telemetry.rs reads.
# DEMO_SMOKE_FRAMES sets the frame count (at least 300); DEMO_TELEMETRY_DIR where the CSV goes
# (a temporary folder by default). `scripts/demo_smoke.sh --build` only installs what the
# demo needs and builds it: CI does that in the background while the headless checks run.
set -euo pipefail
cd "$(dirname "$0")/.."
DEMO_PACKAGES="xvfb xauth libwayland-dev libxkbcommon-dev libvulkan1 mesa-vulkan-drivers libxkbcommon-x11-0 libxcursor1 libxrandr2 libxi6 libx11-xcb1" \
  scripts/setup.sh
cargo build --features demo --example demo
[ "${1:-}" = "--build" ] && exit 0
shot="${1:-demo_screenshot.png}"
frames="${DEMO_SMOKE_FRAMES:-300}"
demo="${CARGO_TARGET_DIR:-target}/debug/examples/demo"
# Mesa's software Vulkan driver only, so a machine with a GPU gives the same picture.
lvp="$(ls /usr/share/vulkan/icd.d/lvp_icd*.json 2>/dev/null | head -n 1 || true)"
if [ -n "$lvp" ]; then
  export VK_ICD_FILENAMES="$lvp" VK_DRIVER_FILES="$lvp"
fi
export WGPU_BACKEND=vulkan
export BEVY_ASSET_ROOT="$PWD"
export DEMO_TELEMETRY_DIR="${DEMO_TELEMETRY_DIR:-$(mktemp -d)}"
xvfb-run -a -s "-screen 0 1280x720x24" "$demo" --smoke "$frames" --screenshot "$shot"
