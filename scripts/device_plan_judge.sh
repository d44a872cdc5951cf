#!/usr/bin/env bash
# The planner judged, in one GPU call: build for the H100 with the tests, run the GPU tests of
# split-K's reproducibility and the rungs under study, then time `auto` against cuBLAS in the
# fp32 and strict modes on the random suite of a seed that was not used for fitting, and on the
# fixed shapes of the `all` suite.  JSON under ${OUT:-device-out}; a short table last.
#
#   scripts/device_plan_judge.sh [SEED] [COUNT]
#   DEV_SEEDS="S ..." also times seeds judged before; SPLIT_SHAPES="MxNxK ..." times split-K's
#   slice counts on those shapes; NAMED_LAYOUTS (default "row col", empty: none) the layouts
#   of the named shapes; ALL_MODES (default "fp32 strict tf32") the modes of the `all` suite,
#   RANDOM_MODES (default "fp32 strict") those of the random seeds
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device_common.sh
device_setup 570 44
seed=${1:-20261124}
count=${2:-200}

device_build test_gpu_split_k test_plan
for t in test_plan test_gpu_split_k; do
  timeout 120 "$build/tests/$t" >"$out/$t.log" 2>&1
  status "$t" "rc $?"
done
cat "$out/test_gpu_split_k.log"
for a in ${VERIFY_ALGOS:-shortk128 gemv8 skinny32x32 tma_wgmma3xtf32}; do
  timeout 60 "$cli" verify --quick --algo "$a" >"$out/verify-$a.log" 2>&1
  status "verify --quick $a" "rc $?"
done
# The judged seed, then any seeds looked at before (DEV_SEEDS), for a comparison on the same shapes.
for s in "$seed" ${DEV_SEEDS:-}; do
  for math in ${RANDOM_MODES:-fp32 strict}; do
    timeout "$(left)" "$cli" bench --suite random --seed "$s" --count "$count" --algo auto --math "$math" \
      --json "$top/random-seed$s-auto-$math.json" >"$out/random-$s-$math.log" 2>&1
    status "random seed $s x $count, auto $math" "rc $? at $SECONDS s"
  done
done
# Split-K's slice counts on small outputs with long k, k not a multiple of the slices (the
# tail's cost).
if [ -n "${SPLIT_SHAPES:-}" ]; then
  # shellcheck disable=SC2086
  timeout "$(left)" "$cli" bench $SPLIT_SHAPES --trans NN --algo skinny32x32,tma_wgmma3xtf32 \
    --split-k 1,2,3,4,5,8,16,33,64 --repeats 5 --warmup 1 --json "$top/split-k.json" >"$out/split-k.log" 2>&1
  status "split-K slice counts" "rc $? at $SECONDS s"
fi
# The shapes the planner issue names as losers, every transpose in both layouts.
named="32x32x100000 12x156x32461 234x13x23999 88x123x14202 16970x9x10183 100000x32x512
  28913x41x1601 1878x46x10661 7573x2201x8 4253x11166x11 191x1224x7451 2281x190x4758
  2000x3000x4000 777x1234x5678 257x257x257"
for math in fp32 strict; do
  for layout in ${NAMED_LAYOUTS-row col}; do
    # shellcheck disable=SC2086
    timeout "$(left)" "$cli" bench $named --trans NN,NT,TN,TT --layout "$layout" --algo auto \
      --math "$math" --json "$top/named-$layout-auto-$math.json" >"$out/named-$layout-$math.log" 2>&1
    status "named shapes $layout, auto $math" "rc $? at $SECONDS s"
  done
done
for math in ${ALL_MODES:-fp32 strict tf32}; do
  timeout "$(left)" "$cli" bench --suite all --count 0 --algo auto --math "$math" \
    --json "$top/all-auto-$math.json" >"$out/all-$math.log" 2>&1
  status "all (fixed shapes), auto $math" "rc $? at $SECONDS s"
done
{
  echo "== summary"; cat "$summary"
  for f in random-$seed-fp32 random-$seed-strict random-$seed-tf32 named-row-fp32 named-col-fp32 named-row-strict named-col-strict all-fp32 all-strict all-tf32; do
    [ -f "$out/$f.log" ] || continue
    echo "== $f"; grep -E "^auto on|^speed of light|mismatch" "$out/$f.log"
    # the nine categories too: an overall geomean alone hid a category at 0.69x once
    awk '/^auto by category/ {on = 1} on && /^$/ {on = 0} on' "$out/$f.log"
  done
  for s in ${DEV_SEEDS:-}; do grep -h "^auto on" "$out/random-$s-fp32.log" "$out/random-$s-strict.log" | sed "s/^/seed $s: /"; done
} | tee "$top/table.txt"
# At most 8 files come back: the JSON in one archive, the logs in another.
tar -C "$top" -czf "$top/0-json.tgz" --remove-files $(cd "$top" && ls ./*.json)
tar -C "$out" -czf "$top/0-logs.tgz" . && rm -rf "$out"
