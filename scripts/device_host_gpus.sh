#!/usr/bin/env bash
# Products of host operands over GPUs, in one call: a build for the GPU found here,
# the CPU test of the split, the GPU test (its two-GPU part where there are two GPUs), the fault
# test (its host cases run the tiled path), an unmodified sgemm_ program run through
# LD_PRELOAD=libtilegemm.so with TILEGEMM_DEVICES=all, then the benchmark at each GPU count:
# the pinned copy bandwidth and the bound it sets, tilegemm from pinned and pageable memory,
# cublasXt on the same GPUs from the same memory, and whether C is bit-identical to 1 GPU's.
# JSON under ${OUT:-device-out} (host-gpus.json, with the drop-in run inside); a short table last.
#
# Environment:
#   GPU_COUNTS       the benchmark's GPU counts, e.g. 1,2,4 (host_operands --gpus; default: 1, 2,
#                    4, ... below the GPUs present, and that number)
#   SHAPES           the benchmark's shapes (default 16384x16384x16384,32768x32768x8192;
#                    smaller ones for a quick look, e.g. 8192x8192x8192)
#   REPS, XT_REPS    timed calls of tilegemm and of cublasXt (default 3 and 2)
#   DROP_IN_N        the sgemm_ program's N (default 16384)
#   DEADLINE         seconds after which the remaining steps are skipped (default 400)
#   TILEGEMM_COMMIT  the commit the JSON names (set it: the device copy's git may be stale)
set -uo pipefail
cd "$(dirname "$0")/.." || exit
. scripts/device_common.sh
device_setup 400 36
export TILEGEMM_COMMIT=${TILEGEMM_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
# Runs a step within min(the time left, $1 seconds), or skips it (rc 124) when under 5 s are left:
# timeout 0 would mean no limit at all.
within() {
  local cap=$1 t
  shift
  t=$(left)
  ((t > cap)) && t=$cap
  ((t >= 5)) || { echo "skipped: the deadline has passed" >&2; return 124; }
  timeout "$t" "$@"
}
start=$SECONDS
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >"$out/build.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" --target tilegemm host_operands sgemm_drop_in \
    test_host_split test_gpu_host_split test_faults >>"$out/build.log" 2>&1
status build "rc $? in $((SECONDS - start)) s"
status GPUs "$(nvidia-smi -L 2>/dev/null | wc -l) ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | tr -s ' ' | paste -sd, -))"

within 120 "$build/tests/test_host_split" >"$out/test_host_split.log" 2>&1
status test_host_split "rc $?"
within 240 "$build/tests/test_gpu_host_split" \
  >"$out/test_gpu_host_split.log" 2>&1
rc=$?
status test_gpu_host_split "rc $rc$([ $rc = 77 ] && echo ' (two-GPU part skipped: one GPU)')"
within 180 "$build/tests/test_faults" >"$out/test_faults.log" 2>&1
status test_faults "rc $?"

# An unmodified program calling sgemm_, tilegemm put in front of its BLAS by the loader.
lib=$(realpath "$build/libtilegemm.so")
TILEGEMM_DEVICES=all LD_PRELOAD=$lib \
  within 150 "$build/bench/sgemm_drop_in" "${DROP_IN_N:-16384}" 3 \
  >"$top/drop_in.json" 2>"$out/drop_in.log"
status "sgemm_ drop-in (LD_PRELOAD, all)" "rc $? $(grep -o '"tflops": [0-9.]*' "$top/drop_in.json")"

include=() counts=()
[ -s "$top/drop_in.json" ] && include=(--include "drop_in=$top/drop_in.json")
[ -n "$(gpu_counts)" ] && counts=(--gpus "$(gpu_counts)")
within 100000 "$build/bench/host_operands" --shapes "${SHAPES:-16384x16384x16384,32768x32768x8192}" \
  "${counts[@]}" --reps "${REPS:-3}" --xt-reps "${XT_REPS:-2}" --json "$top/host-gpus.json" \
  "${include[@]}" >"$out/bench.log" 2>&1
status benchmark "rc $? at $SECONDS s"
{
  echo "== summary"; cat "$summary"
  grep -E "GB/s|TFLOP/s|bit-identical|skipped|added|^shape|same|DIFFER" "$out/bench.log" | tail -80
} | tee "$top/table.txt"
tar -C "$out" -czf "$top/0-logs.tgz" . && rm -rf "$out"
