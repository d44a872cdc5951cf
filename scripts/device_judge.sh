#!/usr/bin/env bash
# The README's test command and the planner judged, in one GPU call: scripts/test.sh as a new
# user runs it (GPU tests must run: TILEGEMM_REQUIRE_GPU=1); `auto` against cuBLAS on the
# random suite of SEED (never used for fitting, tuning or the regret corpus) in each mode of
# MODES, and on the fixed suites in fp32; autotuning's regret on a warm cache (every rung timed
# beside it on AUTOTUNE_COUNT shapes of the held-out corpus seed 4, bench/regret.py); then
# scripts/run.sh, the README's other command, in the time left.  Calls of a few microseconds
# get more timed runs (--min-timed-ms), for cuBLAS and tilegemm alike.  JSON and logs under
# ${OUT:-device-out}; the category tables last.
#
#   scripts/device_judge.sh SEED [COUNT]      environment: MODES (default "fp32 strict"; empty:
#                                             no random suite), FIXED (default 1: the fixed
#                                             suites), TESTS (default 1; 0: build the CLI
#                                             alone, no test.sh), AUTOTUNE_COUNT (default
#                                             40; 0: no autotuning), RUN (default 1; 0: no
#                                             run.sh), DEADLINE (seconds, default 560)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device_common.sh
device_setup 560 40
seed=$1
count=${2:-200}
export TILEGEMM_COMMIT=${TILEGEMM_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
if [ "${TESTS:-1}" = 1 ]; then
  start=$SECONDS
  timeout -k 5 "$(left)" scripts/test.sh >"$out/test.log" 2>&1
  status "scripts/test.sh" "rc $? in $((SECONDS - start)) s: $(grep -E 'tests passed|tests failed' "$out/test.log" | tail -n 1)"
  # A failing test's output at once, in a file of its own: a call cut short by its limit never
  # reaches the packing of the logs at the end, and only 8 files come back.
  grep -E -A60 '\*\*\*(Failed|Timeout|Exception)|\(Failed\)|Errors while running' "$out/test.log" \
    | head -n 400 >"$top/test-failures.txt"
  cli=build/tilegemm
else
  device_build
fi
for math in ${MODES-fp32 strict}; do
  timeout -k 5 "$(left)" "$cli" bench --suite random --seed "$seed" --count "$count" --algo auto \
    --math "$math" --min-timed-ms 1 --json "$top/random-seed$seed-auto-$math.json" \
    >"$out/random-$math.log" 2>&1
  status "random seed $seed x $count, auto $math" "rc $? at $SECONDS s"
done
if [ "${FIXED:-1}" = 1 ]; then
  timeout -k 5 "$(left)" "$cli" bench --suite all --count 0 --algo auto --math fp32 --min-timed-ms 1 \
    --json "$top/all-auto-fp32.json" >"$out/all-fp32.log" 2>&1
  status "all (fixed shapes), auto fp32" "rc $? at $SECONDS s"
fi
if [ "${AUTOTUNE_COUNT:-40}" != 0 ]; then
  TILEGEMM_AUTOTUNE=1 TILEGEMM_CACHE_DIR=$(mktemp -d) timeout -k 5 "$(left)" "$cli" bench --suite random \
    --seed 4 --count "${AUTOTUNE_COUNT:-40}" --algo all --split-k pow2 --prune 3 --repeats 5 \
    --warmup 1 --min-timed-ms 2 --math fp32 --json "$top/autotune-seed4-fp32.json" >"$out/autotune.log" 2>&1
  status "autotune, seed 4 x ${AUTOTUNE_COUNT:-40}, every rung" "rc $? at $SECONDS s"
  python3 bench/regret.py "$top/autotune-seed4-fp32.json" --json "$top/autotune-regret.json" \
    >"$out/regret.txt" 2>&1
fi
if [ "${RUN:-1}" = 1 ]; then
  start=$SECONDS
  timeout -k 5 "$(left)" scripts/run.sh >"$out/run.log" 2>&1
  status "scripts/run.sh" "rc $? in $((SECONDS - start)) s"
fi
{
  echo "== summary"; cat "$summary"
  grep -hsE "Failed|\*\*\*Not Run|\(Failed\)" "$out/test.log" | head -20
  cat "$out/regret.txt" 2>/dev/null
  for f in random-fp32 random-strict all-fp32; do
    [ -f "$out/$f.log" ] || continue
    echo "== $f"; sed -n '/^auto on/,$p' "$out/$f.log" | grep -v "^summary"
  done
} | tee "$top/table.txt"
tar -C "$out" -czf "$top/0-logs.tgz" . && rm -rf "$out"
