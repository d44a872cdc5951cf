#!/usr/bin/env bash
# The planner's second sweep, in one GPU call, after rung 9 and the new shortk128: their GPU
# tests and verify, rung 7 under the sanitizers, every candidate unsplit on the random suite of
# a second tuning seed (bench/fit_model.py takes a rung's runs from the newest sweep that has
# it), and the tuned table of the fixed suites rewritten with rung 9 among the candidates.
# JSON under ${OUT:-device-out}; a short table last.
#
#   scripts/device_plan_sweep2.sh [SEED] [COUNT]
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device_common.sh
device_setup 560 44
seed=${1:-2}
count=${2:-150}
algos=tma_wgmma3xtf32,tma_wgmmatf32,shortk128,warptile64,skinny32x64,skinny16x128,skinny128x32,ffma128x256,wgmma3xtf32
tuned=ffma128x128,ffma128x256,warptile128_l2,warptile64,wgmma3xtf32,wgmmatf32,tma_wgmma3xtf32,tma_wgmmatf32

start=$SECONDS
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTG_CUDA_ARCH=90a >"$out/build.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" --target tilegemm_cli test_gpu_rungs >>"$out/build.log" 2>&1
status build "rc $? in $((SECONDS - start)) s"
cli=$build/tilegemm
for a in tma_wgmma3xtf32 tma_wgmmatf32; do
  timeout 90 "$build/tests/test_gpu_rungs" --algo "$a" >"$out/test_gpu_rungs-$a.log" 2>&1
  status "test_gpu_rungs --algo $a" "rc $?"
done
for a in tma_wgmma3xtf32 wgmma3xtf32 shortk128; do
  timeout 60 "$cli" verify --quick --algo "$a" >"$out/verify-$a.log" 2>&1
  status "verify --quick $a" "rc $?"
done
for tool in synccheck racecheck; do
  timeout 60 compute-sanitizer --tool "$tool" --error-exitcode 3 "$cli" verify --algo wgmma3xtf32 \
    --shape 130x67x300 --layout col --trans TT --beta 0.5 >"$out/$tool-wgmma3xtf32.log" 2>&1
  status "$tool wgmma3xtf32 130x67x300 col TT" "rc $?: $(grep -h -m1 -E 'ERROR SUMMARY|hazards displayed' "$out/$tool-wgmma3xtf32.log")"
done
timeout "$(left)" "$cli" bench --suite random --seed "$seed" --count "$count" --algo "$algos" --split-k 1 \
  --repeats 3 --warmup 1 --json "$top/sweep-random-seed$seed.json" >"$out/sweep.log" 2>&1
status "sweep random seed $seed x $count" "rc $? at $SECONDS s"
timeout "$(left)" "$cli" bench --suite all --count 0 --algo "$tuned" --tune --tune-file "$top/sm_90.tsv" \
  --json "$top/tune-all.json" >"$out/tune.log" 2>&1
status "tune the fixed suites" "rc $? at $SECONDS s"
{ echo "== summary"; cat "$summary"; grep -h "summary:" "$out/sweep.log" "$out/tune.log"; } | tee "$top/table.txt"
tar -C "$out" -czf "$top/0-logs.tgz" . && rm -rf "$out"
