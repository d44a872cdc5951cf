#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test under CTest (C tests,
# the CLI, the BLAS ABI and install tests, the Python tests).  GPU tests report as skipped on a
# machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j"$(nproc)"
