#!/usr/bin/env bash
# The planner judged, in one GPU call: build for the H100 with the tests, run the GPU tests of
# split-K's reproducibility and the rungs under study, then time `auto` against cuBLAS in the
# fp32 and strict modes on the random suite of a seed that was not used for fitting, and on the
# fixed shapes of the `all` suite.  JSON under ${OUT:-device-out}; a short table last.
#
#   scripts/device_plan_judge.sh [SEED] [COUNT]
set -uo pipefail
cd "$(dirname "$0")/.."
top=${OUT:-device-out}
out=$top/logs
mkdir -p "$out"
seed=${1:-20261124}
count=${2:-200}
build=${BUILD_DIR:-build-device}
deadline=${DEADLINE:-570}
left() { echo $((deadline - SECONDS)); }
summary=$out/summary.txt
: >"$summary"
status() { printf '%-44s %s\n' "$1" "$2" | tee -a "$summary"; }
export TILEGEMM_REQUIRE_GPU=1

start=$SECONDS
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTG_CUDA_ARCH=90a >"$out/build.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" --target tilegemm_cli test_gpu_split_k test_plan >>"$out/build.log" 2>&1
status build "rc $? in $((SECONDS - start)) s"
cli=$build/tilegemm
for t in test_plan test_gpu_split_k; do
  timeout 120 "$build/tests/$t" >"$out/$t.log" 2>&1
  status "$t" "rc $?"
done
cat "$out/test_gpu_split_k.log"
for a in ${VERIFY_ALGOS:-gemv8,shortk128,skinny32x32,wgmma3xtf32}; do
  timeout 60 "$cli" verify --quick --algo "$a" >"$out/verify-$a.log" 2>&1
  status "verify --quick $a" "rc $?"
done
for math in fp32 strict; do
  timeout "$(left)" "$cli" bench --suite random --seed "$seed" --count "$count" --algo auto --math "$math" \
    --json "$top/random-seed$seed-auto-$math.json" >"$out/random-$math.log" 2>&1
  status "random seed $seed x $count, auto $math" "rc $? at $SECONDS s"
done
for math in fp32 strict; do
  timeout "$(left)" "$cli" bench --suite all --count 0 --algo auto --math "$math" \
    --json "$top/all-auto-$math.json" >"$out/all-$math.log" 2>&1
  status "all (fixed shapes), auto $math" "rc $? at $SECONDS s"
done
{
  echo "== summary"; cat "$summary"
  for f in random-fp32 random-strict all-fp32 all-strict; do
    echo "== $f"; grep -E "^auto on|mismatch" "$out/$f.log"
  done
} | tee "$top/table.txt"
tar -C "$out" -czf "$top/0-logs.tgz" . && rm -rf "$out"
