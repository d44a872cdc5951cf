#!/usr/bin/env bash
# The FFMA rungs (strict mode's arithmetic) on the GPU, in one call: build the CLI and the GPU
# rung tests for the H100, run the GPU tests and `tilegemm verify --quick` of the rungs named,
# time them beside cuBLAS FP32 on large squares and on the mid-size shapes where strict mode
# trails it (--repeats 10), then profile one launch of each named kernel and of cuBLAS's at
# 8192^3 with Nsight Compute (warp stalls, scheduler, instruction mix, shared-memory
# wavefronts, and the SASS-level stall samples of each kernel's source page).  JSON and
# reports under ${OUT:-device-out}; a short table of the timings last.
#
#   scripts/device_ffma.sh    environment: RUNGS (space-separated; default ffma128x256
#                             ffma256x128 ffma128x128), PROFILE (rungs to profile; default the
#                             first of RUNGS), BENCH_OPTS (added to each `tilegemm bench`,
#                             e.g. --split-k 1), CASES (below), PROFILE=none to skip the
#                             profiles, PROFILE_ARGS (layout and transposes of the profiled
#                             8192^3, default --layout col --trans NN), NCU_SECTIONS (ncu's
#                             --section or --set options), DEADLINE (seconds, default 570)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device_common.sh
device_setup 570 44
rungs=${RUNGS:-ffma128x256 ffma256x128 ffma128x128}
algos=$(echo $rungs | tr ' ' ',')
device_build test_gpu_rungs

rung_tests "$rungs"

# name | shapes | options; CASES (the same, ';' between cases) replaces them
cases=(
  "squares-col-nn|4096x4096x4096 4097x4097x4097 8192x8192x8192 16384x16384x16384|--layout col --trans NN"
  "squares-row-tn|4096x4096x4096 8192x8192x8192|--layout row --trans TN"
  "mid-col|2186x408x3505 481x23964x3377 1020x102x8777 3657x4580x280 2800x199x25510|--layout col --trans NN,TN"
  "mid-row|6471x168x10437 734x2292x9506 3583x197x2108 569x16616x5312|--layout row --trans TN,TT"
)
[ -n "${CASES:-}" ] && IFS=';' read -r -a cases <<<"$CASES"
for c in "${cases[@]}"; do
  IFS='|' read -r name shapes opts <<<"$c"
  if [ "$(left)" -lt 60 ]; then
    status "bench $name" "not run: too little time left"
    continue
  fi
  # shellcheck disable=SC2086
  timeout "$(left)" "$cli" bench $shapes $opts --algo "$algos" --math strict --repeats 10 ${BENCH_OPTS:-} \
    --json "$top/ffma-$name.json" >"$out/bench-$name.log" 2>&1
  status "bench $name" "rc $? at $SECONDS s"
done

ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || true)
if [ -n "$ncu" ] && [ "${PROFILE:-}" != none ]; then
  mkdir -p "$top/ncu"
  sections=${NCU_SECTIONS:-"--section SpeedOfLight --section WarpStateStats --section SchedulerStats
    --section InstructionStats --section ComputeWorkloadAnalysis
    --section MemoryWorkloadAnalysis_Tables --section SourceCounters"}
  for r in ${PROFILE:-${rungs%% *}} cublas; do
    if [ "$(left)" -lt 60 ]; then
      status "ncu $r" "not run: too little time left"
      continue
    fi
    kernel=$([ "$r" = cublas ] && echo "regex:sm80_xmma|sgemm" || echo "regex:sgemm_ffma")
    # shellcheck disable=SC2086
    timeout "$(left)" "$ncu" --clock-control none --kernel-name "$kernel" --launch-skip 2 \
      --launch-count 1 $sections -o "$top/ncu/$r" -f \
      "$cli" bench 8192x8192x8192 ${PROFILE_ARGS:---layout col --trans NN} --algo "$r" \
      --repeats 1 --warmup 2 \
      >"$out/ncu-$r.log" 2>&1
    status "ncu $r" "rc $? at $SECONDS s"
    "$ncu" --import "$top/ncu/$r.ncu-rep" --page details >"$top/ncu/$r-details.txt" 2>&1
    "$ncu" --import "$top/ncu/$r.ncu-rep" --page source --csv --print-source sass \
      >"$top/ncu/$r-sass.csv" 2>"$out/ncu-$r-source.log"
  done
  tar -C "$top" -czf "$top/ncu.tgz" ncu && rm -rf "$top/ncu"
fi

{
  echo "== summary"
  cat "$summary"
  for f in "$top"/ffma-*.json; do
    [ -f "$f" ] || continue
    echo "== $(basename "$f" .json): ms, TFLOP/s and ratio to cuBLAS FP32 of each entry, and" \
      "the slices it ran (entries left to the planner's count may differ: BENCH_OPTS=--split-k 1)"
    python3 - "$f" <<'EOF'
import json, sys
runs = json.load(open(sys.argv[1]))["results"]
for r in runs:
    if r.get("median_ms"):
        shape = f'{r["m"]}x{r["n"]}x{r["k"]}'
        slices = r.get("ran_split_k") or "?"
        print(f'{shape:>18} {r["layout"]:>3} {r["trans"]:>2} {r["algo"]:>18} '
              f'{r["median_ms"]:9.3f} ms {r["tflops"]:5.1f} TFLOP/s {r["ratio"]:5.2f}x '
              f'{slices:>3} slices {r["status"]}')
EOF
  done
} | tee "$top/table.txt"
tar -C "$out" -czf "$top/logs.tgz" . && rm -rf "$out"
