#!/usr/bin/env bash
# The tuned table's fp32 rows of the fixed suites' large calls re-timed in one GPU call, where
# rung 11 (ozaki2_int8) has become faster than the table says: the calls of `--suite all
# --count 0` with m, n and k all at least 4096 (4096^3 in all four transposes, 4097^3, 8192^3,
# 16384^3), the fp32 candidates timed at the split-K counts of the table's first tune (0, 1, 2,
# 4 and 8), and their winners merged into tuning/sm_90.tsv (`tilegemm bench --tune --tune-merge
# --tune-modes fp32`: every other row kept, ozaki2_int8 written only where it wins by its auto
# margin, tg_algo_auto_margin).  The candidates are the 3xTF32 rungs that won fp32 there and
# rung 11; the FFMA rungs, at under half 3xTF32's rate there in the first tune, are not timed.
# Builds the CLI once (sm_90a).
# Results under ${OUT:-device-out}: sm_90.tsv (the merged table: copy it to tuning/ and
# rebuild), retune-nn.json and retune-4096-transposes.json (the runs), logs/ (gpu.txt,
# build.log, the runs' output, sm_90.before.tsv, sm_90.diff, tables.log, summary.txt).
#
#   scripts/device_retune.sh
#   ALGOS            the rungs timed (default tma_wgmma3xtf32,tma_wgmma3xtf32_64x128,
#                    tma_wgmma3xtf32_128x64,ozaki2_int8)
#   SPLITS           --split-k (default 0,1,2,4,8, as the table's first tune)
#   TILEGEMM_COMMIT  the commit the table and the JSON name (default: git rev-parse)
#   DEADLINE         seconds after the start at which the run is cut (default 540)
# About 4 minutes on an H100: the build (60 to 90 s), then 7 calls of 27 entries each (cuBLAS,
# cuBLAS FAST_TF32, and the 4 rungs and auto at 5 split-K settings), each entry 3 warm-up, 1
# checked and 10 timed runs: at 16384^3 25 x 14 runs of 60 to 75 ms and 14 of cuBLAS's 165 ms,
# about 27 s; 8192^3 about 4 s; the five calls of 4096^3 and 4097^3 under 1 s each; plus the
# operands' fill and copies (3 GiB at 16384^3).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. scripts/device_common.sh
device_setup 540 44
: "${TILEGEMM_COMMIT:=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
export TILEGEMM_COMMIT
algos=${ALGOS:-tma_wgmma3xtf32,tma_wgmma3xtf32_64x128,tma_wgmma3xtf32_128x64,ozaki2_int8}
splits=${SPLITS:-0,1,2,4,8}
table=tuning/sm_90.tsv
# What a step may still take: at least a second (timeout 0 would mean no limit).
cap() { local l; l=$(left); echo $((l > 1 ? l : 1)); }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv \
  >"$out/gpu.txt" 2>&1
device_build
cp "$table" "$out/sm_90.before.tsv"
tune=(--algo "$algos" --split-k "$splits" --tune --tune-merge --tune-modes fp32
  --tune-file "$table")

start=$SECONDS
timeout "$(cap)" "$cli" bench 4096 4097 8192 16384 --trans NN "${tune[@]}" \
  --json "$top/retune-nn.json" >"$out/bench-nn.txt" 2>"$out/bench-nn.err"
status "bench 4096 4097 8192 16384 NN" "rc $? in $((SECONDS - start)) s"
start=$SECONDS
timeout "$(cap)" "$cli" bench 4096 --trans NT,TN,TT "${tune[@]}" \
  --json "$top/retune-4096-transposes.json" >"$out/bench-4096-transposes.txt" \
  2>"$out/bench-4096-transposes.err"
status "bench 4096 NT TN TT" "rc $? in $((SECONDS - start)) s"

cp "$table" "$top/sm_90.tsv"
diff "$out/sm_90.before.tsv" "$table" >"$out/sm_90.diff"
status "rows changed" "$(grep -c '^>' "$out/sm_90.diff") lines new (logs/sm_90.diff)"
# The merged table as the build reads it.
cmake -DPROJECT_SOURCE_DIR="$PWD" -DTG_GENERATED_DIR="$build/retune-tables" \
  -P cmake/tuning.cmake >"$out/tables.log" 2>&1
status "cmake/tuning.cmake on the merged table" "rc $? ($(grep -o '[0-9]* tuned rows' "$out/tables.log"))"
