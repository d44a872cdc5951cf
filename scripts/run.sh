#!/usr/bin/env bash
# Sets everything up and runs the main job on whatever hardware is present: builds, prints what
# was found, verifies every rung against the float64 reference, and runs a short benchmark of
# the ladder (against cuBLAS on a GPU; the CPU backend, and OpenBLAS beside it, otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
build=${BUILD_DIR:-build}
"$build/tilegemm" info
"$build/tilegemm" verify
"$build/tilegemm" bench --suite quick
if [ -x "$build/bench/cpu_vs_openblas" ]; then
  "$build/bench/cpu_vs_openblas" 512 1024 2048
fi
