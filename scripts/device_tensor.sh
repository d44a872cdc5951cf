#!/usr/bin/env bash
# The tensor-core rungs on a GPU machine, in one call of at most 10 minutes: a timed native
# build (-j<cores>); the GPU tests of the tensor-core rungs; `tilegemm verify` on them; the
# benchmark of the squares in the four transposes, in TF32 and FP32 modes against cuBLAS
# (FAST_TF32 and SGEMM) in the same run; how TF32 mode rounds its inputs beside cuBLAS
# (bench/tf32_rounding.py); and compute-sanitizer racecheck and synccheck on each rung, over
# cases that reach every form of feeding the tensor core, in the time left.  Results under ${OUT:-device-out}:
# bench-*.json, tf32-rounding.json, 0-logs.tgz and table.txt; a short table last.
#
#   TILEGEMM_COMMIT=$(git rev-parse --short HEAD) scripts/device_tensor.sh
# Environment:
#   STEPS        which steps, space-separated (default: build tests verify sanitize bench
#                rounding; build always runs)
#   RUNGS        the rungs (default: mma3xtf32,mmatf32,tma_wgmma3xtf32,tma_wgmmatf32)
#   SHAPES       the benchmark's shapes (default: 4096 8192 16384 4097; none: no squares)
#   BENCH_TRANS  its transposes (default: NN,NT,TN,TT)
#   BENCH_SUITE  a suite to time `auto` over as well (default: none; `all` takes about 4
#                minutes, `all` with BENCH_COUNT=0, its 18 fixed shapes, about one a mode)
#   BENCH_COUNT  its random shapes (--count; default: the benchmark's)
#   BENCH_SEED   their seed (--seed; default: the benchmark's)
#   BENCH_MODES  the math modes of that suite (default: tf32 fp32)
#   CTEST_REGEX  the tests (default: those of the tensor-core rungs and split-K)
#   DEADLINE     seconds after which the remaining steps are skipped (default 560)
set -uo pipefail
cd "$(dirname "$0")/.." || exit
. scripts/device_common.sh
device_setup 560 40
steps=" ${STEPS:-build tests verify sanitize bench rounding} "
rungs=${RUNGS:-mma3xtf32,mmatf32,tma_wgmma3xtf32,tma_wgmmatf32}
cli=$build/tilegemm
has() { [[ $steps == *" $1 "* ]] && (($(left) > 15)); }
export TILEGEMM_COMMIT=${TILEGEMM_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
export TG_COMMIT=$TILEGEMM_COMMIT # the Python scripts' name for it

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt" 2>&1
start=$SECONDS
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$(command -v python3)" \
  >"$out/build.log" 2>&1 && cmake --build "$build" -j"$(nproc)" >>"$out/build.log" 2>&1
status "build -j$(nproc)" "rc $? in $((SECONDS - start)) s"

if has tests; then
  regex=${CTEST_REGEX:-"test_gpu_rungs\.($(echo "$rungs" | tr , '|'))$|emulated_($(echo "$rungs" | tr , "|"))$|test_gpu_split_k|test_gpu_large"}
  (cd "$build" && timeout "$(left)" ctest --output-on-failure -j4 -R "$regex") >"$out/ctest.log" 2>&1
  status ctest "$(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -n 1)"
fi

if has verify; then
  for algo in ${rungs//,/ }; do
    timeout "$(left)" "$cli" verify --gpu-only --algo "$algo" >"$out/verify-$algo.log" 2>&1
    status "verify $algo" "$([ $? -eq 0 ] && echo PASS || echo "FAIL or cut") $(grep -E 'passed|failed' "$out/verify-$algo.log" | tail -n 1)"
  done
fi

if has bench; then
  if [ "${SHAPES:-}" != none ]; then
    # shellcheck disable=SC2086
    timeout "$(left)" "$cli" bench ${SHAPES:-4096 8192 16384 4097} \
      --trans "${BENCH_TRANS:-NN,NT,TN,TT}" --algo "$rungs" --math tf32 \
      --json "$top/bench-squares.json" >"$out/bench-squares.log" 2>&1
    status "bench squares" "rc $?"
  fi
  if [ -n "${BENCH_SUITE:-}" ]; then
    for math in ${BENCH_MODES:-tf32 fp32}; do
      has bench || break
      # shellcheck disable=SC2086
      timeout "$(left)" "$cli" bench --suite "$BENCH_SUITE" ${BENCH_COUNT:+--count "$BENCH_COUNT"} \
        ${BENCH_SEED:+--seed "$BENCH_SEED"} \
        --algo auto --math "$math" \
        --json "$top/bench-$BENCH_SUITE-$math.json" >"$out/bench-$BENCH_SUITE-$math.log" 2>&1
      status "bench $BENCH_SUITE $math" "rc $?"
    done
  fi
fi

if has rounding; then
  cmake --build "$build" -j"$(nproc)" --target tilegemm >>"$out/build.log" 2>&1
  PYTHONPATH=$PWD/python TILEGEMM_LIBRARY=$PWD/$build/libtilegemm.so timeout "$(left)" \
    python3 bench/tf32_rounding.py --json "$top/tf32-rounding.json" >"$out/rounding.log" 2>&1
  status "tf32 rounding" "rc $?"
fi

if has sanitize; then
  for tool in racecheck synccheck; do
    for algo in ${rungs//,/ }; do
      clean=1
      # Row-major NN is the turned form, column-major NN the rows-major A, row-major NT both
      # K-major, a misaligned case the planes, misaligned column-major TN A copied by the
      # producer (the consumers read it from the stages themselves).
      for case in "--layout row --trans NN --shape 200x136x100 --memory device" \
                  "--layout col --trans NN --shape 257x255x300 --batch 2 --beta 0.5" \
                  "--layout row --trans NT --shape 130x67x129" \
                  "--layout row --trans TN --shape 33x17x45 --misalign" \
                  "--layout col --trans TN --shape 130x67x129 --misalign"; do
        (($(left) > 15)) || { clean=0; break; }
        # shellcheck disable=SC2086
        timeout "$(left)" compute-sanitizer --tool "$tool" --error-exitcode 3 \
          "$cli" verify --algo "$algo" $case >>"$out/sanitizer.log" 2>&1 || clean=0
      done
      status "$tool $algo" "$([ $clean -eq 1 ] && echo clean || echo 'ERRORS or cut')"
    done
  done
fi

{
  cat "$summary"
  grep -vE '^\s*$' "$out"/bench-squares.log 2>/dev/null | grep -vE 'progress|^\[' | tail -n 60
  grep -hE 'summary|geomean' "$out"/bench-"${BENCH_SUITE:-none}"-*.log 2>/dev/null
  cat "$out/rounding.log" 2>/dev/null
} | tee "$top/table.txt"
tar -C "$out" -czf "$top/0-logs.tgz" . && rm -rf "$out"
