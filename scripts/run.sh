#!/usr/bin/env bash
# The main job, until the demo exists: a vehicle file driven headless by a program file (no
# window, no GPU). It writes headless_drive.csv and prints the 0–100 km/h time. Options (see
# examples/headless_drive.rs): --vehicle, --program, --csv, --hz, --substeps, --friction.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo run --release --example headless_drive -- "$@"
