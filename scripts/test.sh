#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test under CTest (C tests,
# the CLI, the BLAS ABI and install tests, the Python tests), one per core.  GPU tests report as
# skipped on a machine without a GPU.  Environment: BUILD_DIR, JOBS, TG_CUDA_ARCH (see
# scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
scripts/build.sh
echo "test: built in $((SECONDS - start)) s; running the tests, ${JOBS:-$(nproc)} at a time"
cd "${BUILD_DIR:-build}"
status=0
ctest --output-on-failure -j"${JOBS:-$(nproc)}" || status=$?
echo "test: done in $((SECONDS - start)) s"
exit $status
