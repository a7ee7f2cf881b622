#!/usr/bin/env bash
# Benchmarks (release build); pass a name filter such as `drivetrain` to run one group.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo bench --bench vehicle_bench -- "$@"
