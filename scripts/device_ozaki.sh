#!/usr/bin/env bash
# Issue 32 in one GPU call: tilegemm's ozaki2_int8 rung beside GEMMul8 and cuBLAS, in one
# process on the same buffers (bench/ozaki_vs_gemmul8.cu says what it measures).  Builds the
# shared library (sm_90a), builds the program against it, cuBLAS and GEMMul8's static library
# where third_party/gemmul8 holds one (not in the tree: carry it to the device; without it the
# program runs cuBLAS and tilegemm alone and says GEMMul8 was skipped), and runs it.
# Results under ${OUT:-device-out}: ozaki_vs_gemmul8.json, table.txt (the program's output) and
# logs/ (gpu.txt, build.log, nvcc.log, summary.txt).
#
#   scripts/device_ozaki.sh [ozaki_vs_gemmul8 options and sizes]   (default: 4096 8192 16384,
#                                                                   every data class)
#   TILEGEMM_COMMIT  the commit the JSON names (default: git rev-parse, where .git exists)
#   GEMMUL8_DIR      GEMMul8's include/ and lib/libgemmul8.a (default third_party/gemmul8);
#                    GEMMUL8_COMMIT, else its COMMIT file, names GEMMul8's commit
#   DEADLINE         seconds after the start at which the run is cut (default 540)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. scripts/device_common.sh
device_setup 540 34
g8=${GEMMUL8_DIR:-third_party/gemmul8}
: "${TILEGEMM_COMMIT:=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
export TILEGEMM_COMMIT
if [ -z "${GEMMUL8_COMMIT:-}" ] && [ -f "$g8/COMMIT" ]; then
  GEMMUL8_COMMIT=$(head -n 1 "$g8/COMMIT")
fi
export GEMMUL8_COMMIT=${GEMMUL8_COMMIT:-unknown}
# What a step may still take: at least a second (timeout 0 would mean no limit).
cap() { local l; l=$(left); echo $((l > 1 ? l : 1)); }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv \
  >"$out/gpu.txt" 2>&1
start=$SECONDS
timeout "$(cap)" cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTG_CUDA_ARCH=90a \
  >"$out/build.log" 2>&1 &&
  timeout "$(cap)" cmake --build "$build" -j"$(nproc)" --target tilegemm >>"$out/build.log" 2>&1
status "build libtilegemm (sm_90a)" "rc $? in $((SECONDS - start)) s"

start=$SECONDS
prog=$build/ozaki_vs_gemmul8
flags=(-O2 -std=c++17 -arch=sm_90a -Iinclude bench/ozaki_vs_gemmul8.cu -o "$prog"
  -L"$build" -ltilegemm -lcublas -Xlinker "-rpath=$(realpath -m "$build")")
if [ -f "$g8/lib/libgemmul8.a" ] && [ -f "$g8/include/gemmul8.hpp" ]; then
  flags+=(-DHAVE_GEMMUL8 -I"$g8/include" "$g8/lib/libgemmul8.a" -lcublasLt)
  with="with GEMMul8 $GEMMUL8_COMMIT"
else
  with="without GEMMul8 (no $g8/lib/libgemmul8.a)"
fi
rm -f "$prog"
timeout "$(cap)" nvcc "${flags[@]}" >"$out/nvcc.log" 2>&1
status "build ozaki_vs_gemmul8" "rc $? in $((SECONDS - start)) s, $with"

start=$SECONDS
LD_LIBRARY_PATH=$(realpath -m "$build")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  timeout "$(cap)" "$prog" --json "$top/ozaki_vs_gemmul8.json" "$@" 2>&1 | tee "$top/table.txt"
status "ozaki_vs_gemmul8" "rc ${PIPESTATUS[0]} in $((SECONDS - start)) s"
