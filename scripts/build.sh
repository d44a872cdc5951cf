#!/usr/bin/env bash
# Installs what is missing (scripts/deps.sh) and builds into ${BUILD_DIR:-build}: everything,
# or the CMake targets named.
#
#   scripts/build.sh [TARGET...]
#
# Environment: BUILD_DIR; TG_CUDA_ARCH, passed to CMake when set (empty: the GPU found here,
# else the portable list; "all": the portable list; or a list such as 90a); JOBS (default: the
# number of cores); PYTHON (the interpreter of the Python tests, default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
build=${BUILD_DIR:-build}
args=(-DCMAKE_BUILD_TYPE=Release)
# The Python tests run with the interpreter deps.sh installed NumPy and pytest for.
python=$(command -v "${PYTHON:-python3}" || true)
[ -z "$python" ] || args+=(-DPython3_EXECUTABLE="$python")
[ -z "${TG_CUDA_ARCH+set}" ] || args+=(-DTG_CUDA_ARCH="$TG_CUDA_ARCH")
# The toolkit's usual place, when nvcc is not on PATH.
if ! command -v nvcc >/dev/null && [ -z "${CUDACXX:-}" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
# CMake's default generator needs make; with ninja alone, use ninja.
if [ ! -f "$build/CMakeCache.txt" ] && ! command -v make >/dev/null &&
  { command -v ninja || command -v ninja-build; } >/dev/null; then
  args+=(-G Ninja)
fi
cmake -S . -B "$build" "${args[@]}"
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" -j"${JOBS:-$(nproc)}" ${targets[@]+"${targets[@]}"}
