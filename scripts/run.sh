#!/usr/bin/env bash
# The headless runner: a vehicle file driven by a program file, with no window and no GPU.
# It writes headless_drive.csv and prints the 0–100 km/h time. Options (see
# examples/headless_drive.rs): --vehicle, --program, --csv, --hz, --substeps, --friction.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo run --release --example headless_drive -- "$@"
