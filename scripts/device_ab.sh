#!/usr/bin/env bash
# Two versions of the library timed side by side in one GPU call, for a change whose worth is
# its speed (a refactor that must cost nothing, a kernel variant): the CLI of each source tree
# built for the H100, then the same `tilegemm bench` arguments run A, B, A, B, and each entry's
# faster median of its two rounds compared.  Nothing else differs between the two: same
# machine, same inputs, same warm GPU.  JSON under ${OUT:-device-out}; a table of B / A last.
#
#   scripts/device_ab.sh DIR_A DIR_B BENCH_ARGS...
#     DIR_A, DIR_B   source trees: `.` for this one; another revision unpacked under .ab/
#                    (ignored by git) before the call and carried with it (the device tool's
#                    carry: [".ab"]):
#                      mkdir -p .ab/NAME && git archive REV -- . ':(exclude)bench/results' | tar -x -C .ab/NAME
#     BENCH_ARGS     what `tilegemm bench` times, e.g. 4096x4096x4096 8192x8192x8192
#                    --algo tma_wgmma3xtf32 --trans NN,TN
#   environment: DEADLINE (seconds, default 570)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device_common.sh
device_setup 570 32
[ $# -ge 3 ] || { echo "usage: scripts/device_ab.sh DIR_A DIR_B BENCH_ARGS..." >&2; exit 2; }
src_a=$(cd "$1" && pwd) src_b=$(cd "$2" && pwd)
shift 2
declare -A cli=()
for side in a b; do
  src=$([ $side = a ] && echo "$src_a" || echo "$src_b")
  start=$SECONDS
  cmake -S "$src" -B "$build-$side" -DCMAKE_BUILD_TYPE=Release -DTG_CUDA_ARCH=90a \
    >"$out/build-$side.log" 2>&1 &&
    cmake --build "$build-$side" -j"$(nproc)" --target tilegemm_cli >>"$out/build-$side.log" 2>&1
  status "build $side ($src)" "rc $? in $((SECONDS - start)) s"
  cli[$side]=$build-$side/tilegemm
done
for round in 1 2; do
  for side in a b; do
    if [ "$(left)" -lt 20 ]; then
      status "round $round $side" "not run: too little time left"
      continue
    fi
    timeout "$(left)" "${cli[$side]}" bench "$@" --json "$top/ab-$side-$round.json" \
      >"$out/bench-$side-$round.log" 2>&1
    status "round $round $side" "rc $? at $SECONDS s"
  done
done
{
  echo "== summary"
  cat "$summary"
  echo "== B / A: each entry's faster median of its rounds (below 1: B is faster)"
  python3 scripts/ab_table.py "$top"
} | tee "$top/table.txt"
tar -C "$out" -czf "$top/logs.tgz" . && rm -rf "$out"
