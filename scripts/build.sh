#!/usr/bin/env bash
# Installs what is missing and builds into ${BUILD_DIR:-build}.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
build=${BUILD_DIR:-build}
# The Python tests run with the interpreter deps.sh installed NumPy and pytest for.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DPython3_EXECUTABLE="$(command -v "${PYTHON:-python3}")"
cmake --build "$build" -j"$(nproc)"
