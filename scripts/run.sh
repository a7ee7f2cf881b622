#!/usr/bin/env bash
# The main job: for now a complete car driven headless by a script (no window, no GPU); it
# writes headless_drive.csv and prints the car's 0–100 km/h time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo run --release --example headless_drive -- "$@"
