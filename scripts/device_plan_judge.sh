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
# The shapes the planner issue names as losers, every transpose in both layouts.
named="32x32x100000 12x156x32461 234x13x23999 88x123x14202 16970x9x10183 100000x32x512
  28913x41x1601 1878x46x10661 7573x2201x8 4253x11166x11 191x1224x7451 2281x190x4758
  2000x3000x4000 777x1234x5678 257x257x257"
for math in fp32 strict; do
  for layout in row col; do
    # shellcheck disable=SC2086
    timeout "$(left)" "$cli" bench $named --trans NN,NT,TN,TT --layout "$layout" --algo auto \
      --math "$math" --json "$top/named-$layout-auto-$math.json" >"$out/named-$layout-$math.log" 2>&1
    status "named shapes $layout, auto $math" "rc $? at $SECONDS s"
  done
done
for math in fp32 strict; do
  timeout "$(left)" "$cli" bench --suite all --count 0 --algo auto --math "$math" \
    --json "$top/all-auto-$math.json" >"$out/all-$math.log" 2>&1
  status "all (fixed shapes), auto $math" "rc $? at $SECONDS s"
done
{
  echo "== summary"; cat "$summary"
  for f in random-fp32 random-strict named-row-fp32 named-col-fp32 named-row-strict named-col-strict all-fp32 all-strict; do
    echo "== $f"; grep -E "^auto on|mismatch" "$out/$f.log"
  done
} | tee "$top/table.txt"
# At most 8 files come back: the JSON in one archive, the logs in another.
tar -C "$top" -czf "$top/0-json.tgz" --remove-files $(cd "$top" && ls ./*.json)
tar -C "$out" -czf "$top/0-logs.tgz" . && rm -rf "$out"
