#!/usr/bin/env bash
# The planner's data, in one GPU call: build for this GPU, check the rungs under study (verify),
# then time every candidate rung unsplit on the random suite of the tuning seed (the cost
# model's data, bench/fit_model.py), and the split-K slice counts on small-output, long-k
# shapes.  Results go under ${OUT:-device-out}: the JSON files and a log archive; a short table
# is printed last.
#
#   scripts/device_plan_sweep.sh [SEED] [COUNT]
# Environment: ALGOS (the candidates), SPLIT_ALGOS, REPEATS (default 3), DEADLINE (seconds).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device_common.sh
device_setup 560 40
seed=${1:-1}
count=${2:-300}
repeats=${REPEATS:-3}
algos=${ALGOS:-warptile64,warptile128_l2,ffma128x128,ffma128x256,skinny128x16,skinny128x32,skinny16x128,skinny32x128,skinny64x32,skinny32x64,skinny32x32,gemv8,shortk128,mma3xtf32,wgmma3xtf32,wgmmatf32}
split_algos=${SPLIT_ALGOS:-warptile64,skinny32x32,skinny64x32,skinny32x64,gemv8,wgmma3xtf32,wgmmatf32}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >"$out/gpu.txt" 2>&1
start=$SECONDS
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTG_CUDA_ARCH=90a -DTG_BUILD_TESTS=OFF \
  >"$out/build.log" 2>&1 && cmake --build "$build" -j"$(nproc)" --target tilegemm_cli >>"$out/build.log" 2>&1
status build "rc $? in $((SECONDS - start)) s"
cli=$build/tilegemm

for a in ${algos//,/ }; do
  timeout 60 "$cli" verify --quick --algo "$a" >"$out/verify-$a.log" 2>&1
  status "verify --quick $a" "$([ $? -eq 0 ] && echo PASS || echo "FAIL: $(tail -n 2 "$out/verify-$a.log" | head -n 1)")"
done

timeout "$(left)" "$cli" bench --suite random --seed "$seed" --count "$count" --algo "$algos" --split-k 1 \
  --repeats "$repeats" --warmup 1 --json "$top/sweep-random-seed$seed.json" >"$out/sweep.log" 2>&1
status "sweep random seed $seed x $count" "rc $? at $SECONDS s"

# Small outputs with long k: where split-K decides.
shapes="32x32x100000 12x156x32461 234x13x23999 88x123x14202 64x64x65536 128x128x32768 256x256x16384 191x1224x7451 500x300x20000 1024x64x30000 16x4096x8192 777x777x12000"
# shellcheck disable=SC2086
timeout "$(left)" "$cli" bench $shapes --trans NN,TN --algo "$split_algos" --split-k 1,2,4,8,16,32,64,128 \
  --repeats "$repeats" --warmup 1 --json "$top/sweep-split-k.json" >"$out/split.log" 2>&1
status "sweep split-K" "rc $? at $SECONDS s"

{
  echo "== summary"; cat "$summary"
  echo "== sweep tail"; tail -n 4 "$out/sweep.log"
  grep -c MISMATCH "$out/sweep.log" | sed 's/^/mismatch rows: /'
  grep MISMATCH "$out"/sweep.log "$out"/split.log | head -n 10
  echo "== split tail"; tail -n 3 "$out/split.log"
} | tee "$top/table.txt"
tar -C "$out" -czf "$top/0-logs.tgz" . && rm -rf "$out"
