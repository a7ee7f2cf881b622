#!/usr/bin/env bash
# The main job: for now the headless drivetrain run (no window, no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo run --release --example headless_drivetrain "$@"
