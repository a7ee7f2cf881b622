#!/usr/bin/env bash
# Runs every test of the workspace (headless: no window, no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --workspace "$@"
