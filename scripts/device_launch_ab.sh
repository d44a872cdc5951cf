#!/usr/bin/env bash
# Two builds of the library, made here for sm_90a and carried in, timed side by side in one GPU
# call for a change to how calls launch their kernels: GPU tests of B first, then
# bench/call_overhead (each call's time, back to back, the host's enqueueing, a graph replay)
# in rounds A B B A, then `tilegemm bench` of the given suites in rounds A B B A.  A table of
# B / A last (scripts/ab_table.py), JSON and logs under ${OUT:-device-out}.
#
#   scripts/device_launch_ab.sh
#     .ab/bins.txz   a/ and b/, each with tilegemm; b/ also test_gpu_split_k, test_gpu_rungs
#                    and call_overhead, a/ call_overhead where A's side is to be timed too
#                    (carry [".ab"])
#   environment: RUNGS (test_gpu_rungs of these, side by side), PARTS (non-empty: call_overhead
#                --parts first), OVERHEAD_FP32, OVERHEAD_STRICT, OVERHEAD_TF32 (call_overhead's
#                shapes in each mode), BENCH (one `tilegemm bench` argument list a line),
#                DEADLINE
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device_common.sh
device_setup 570 34
bins=$top/bins
mkdir -p "$bins" "$top/ab"
tar -xJf .ab/bins.txz -C "$bins" || { status unpack "failed"; exit 1; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv \
  >"$top/smi.csv" 2>&1

"$bins/b/test_gpu_split_k" >"$out/test_gpu_split_k.log" 2>&1
status "test_gpu_split_k (B)" "rc $? ($(tail -1 "$out/test_gpu_split_k.log"))"
pids=()
for r in ${RUNGS:-}; do
  timeout 240 "$bins/b/test_gpu_rungs" --algo "$r" >"$out/rungs-$r.log" 2>&1 &
  pids+=($!)
done
i=0
for r in ${RUNGS:-}; do
  wait "${pids[$i]}"
  status "test_gpu_rungs $r (B)" "rc $? ($(tail -1 "$out/rungs-$r.log"))"
  i=$((i + 1))
done

[ -z "${PARTS:-}" ] || "$bins/b/call_overhead" --parts >"$top/parts.txt" 2>&1
for round in a b b a; do
  [ -x "$bins/$round/call_overhead" ] || continue
  for math in fp32 strict tf32; do
    var=OVERHEAD_$(echo $math | tr a-z A-Z)
    [ -n "${!var:-}" ] || continue
    timeout 60 "$bins/$round/call_overhead" --math $math ${!var} \
      >>"$top/overhead-$round.txt" 2>>"$out/overhead-$round.err"
  done
done
status "call_overhead" "$(cat "$top"/overhead-*.txt 2>/dev/null | wc -l) lines"

n=0
while IFS= read -r args; do
  [ -n "$args" ] || continue
  for round in a b b a; do
    if [ "$(left)" -lt 30 ]; then
      status "bench $n $round" "not run: too little time left"
      continue
    fi
    mkdir -p "$top/ab/$n"
    timeout "$(left)" "$bins/$round/tilegemm" bench $args --json "$top/ab/$n/ab-$round-$SECONDS.json" \
      >>"$out/bench-$round.log" 2>&1
    status "bench $n $round" "rc $? at $SECONDS s"
  done
  n=$((n + 1))
done <<<"${BENCH:-}"

{
  [ -f "$top/parts.txt" ] && cat "$top/parts.txt"
  echo "== call_overhead (us a call; rounds of A then B where both have it)"
  cat "$top"/overhead-*.txt 2>/dev/null | sort -s -k1,2 | uniq | head -120
  for dir in "$top"/ab/*/; do
    echo "== bench $(basename "$dir"): B / A, each entry's faster median of its rounds (below 1: B is faster)"
    python3 scripts/ab_table.py "$dir" | tail -40
  done
} | tee "$top/table.txt"
tar -C "$top" -cJf "$top/ab.txz" ab logs smi.csv && rm -rf "$top/ab" "$bins"
