#!/usr/bin/env bash
# The performance sweep, in one GPU call: build for sm_90, check the rungs under study on the
# GPU (verify, the GPU test of each), measure accuracy against k (bench/accuracy), time every
# candidate rung against cuBLAS on the shapes that matter (tilegemm bench, JSON), and read the
# counters of the tensor-core rung (Nsight Compute) and its SASS instruction mix.
# Logs and results go under ${OUT:-device-out}; a short table is printed last.
#
#   scripts/device_sweep.sh [ALGO,ALGO,...]
set -uo pipefail
cd "$(dirname "$0")/.."
top=${OUT:-device-out}
out=$top/logs # packed into $top/0-logs.tgz at the end: a lent machine returns only a few files
mkdir -p "$out"
algos=${1:-auto,warptile64,warptile128_l2,warptile256x128_l2,mma3xtf32,mma3xtf32_p64,mma3xtf32_nopromo,mmatf32}
build=${BUILD_DIR:-build-device}
summary="$out/summary.txt"
: >"$summary"
status() { printf '%-34s %s\n' "$1" "$2" >>"$summary"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >"$out/gpu.txt" 2>&1
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTG_CUDA_ARCH=90a -DTG_BUILD_TESTS=ON \
  >"$out/build.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" --target tilegemm_cli accuracy test_gpu_rungs \
    >>"$out/build.log" 2>&1
status build "$([ $? -eq 0 ] && echo ok || echo FAILED)"

for a in ${algos//,/ }; do
  [ "$a" = auto ] && continue
  timeout 120 "$build/tilegemm" verify --quick --algo "$a" >"$out/verify-$a.log" 2>&1
  status "verify --quick $a" "$([ $? -eq 0 ] && echo PASS || echo "FAIL: $(tail -n 2 "$out/verify-$a.log" | head -n 1)")"
done

[ "${ACCURACY_K-x}" = "" ] || timeout 240 "$build/bench/accuracy" --size 1024 --k ${ACCURACY_K:-16,64,256,1024,4096,16384} \
  --json "$out/accuracy.json" >"$out/accuracy.log" 2>&1
status accuracy "rc $?"

shapes=${SHAPES:-"4096x4096x4096 8192x8192x8192 16384x16384x16384 4097x4097x4097 2048x2048x2048 1000x1000x1000 1024x1024x1024 8192x8192x256 3000x5000x700 127x8191x1023 65536x64x4096 64x65536x4096 1024x1024x65536 16384x128x16384"}
# shellcheck disable=SC2086
timeout 420 "$build/tilegemm" bench $shapes --algo "$algos" --json "$out/bench-nn.json" \
  >"$out/bench-nn.log" 2>&1
status "bench NN" "rc $?"
timeout 120 "$build/tilegemm" bench 4096x4096x4096 --trans ${TRANS:-NT,TN,TT} --algo "$algos" \
  --json "$out/bench-trans.json" >"$out/bench-trans.log" 2>&1
status "bench NT/TN/TT" "rc $?"

if [ -z "${SKIP_NCU:-}" ] && command -v ncu >/dev/null 2>&1; then
  ncu_algo=${NCU_ALGO:-wgmma3xtf32}
  timeout 150 ncu --clock-control none -k "regex:${NCU_KERNEL:-sgemm_wgmma_tf32}" --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
    --section SchedulerStats --section MemoryWorkloadAnalysis --section Occupancy \
    "$build/tilegemm" run 4096x4096x4096 --algo "$ncu_algo" >"$out/ncu-$ncu_algo.txt" 2>&1
  status "ncu $ncu_algo" "rc $?"
fi
if command -v cuobjdump >/dev/null 2>&1; then
  for f in k06_mma_tf32 k07_wgmma_tf32; do
    obj=$(find "$build" -name "$f.cu.o" | head -n 1)
    cuobjdump -sass "$obj" >"$out/$f.sass" 2>&1
    # the instruction mix of the first instance (both operands copied by 16-byte vectors)
    awk '/Function : /{n++} n==1' "$out/$f.sass" |
      grep -oE '^\s+/\*[0-9a-f]{4}\*/\s+[A-Z0-9_]+' | awk '{print $2}' | sort | uniq -c |
      sort -rn | head -n 25 >"$out/$f-mix.txt"
  done
fi

{
  echo "== summary"; cat "$summary"
  echo "== accuracy (worst scaled / RMS relative)"; grep -vE '^\s*$' "$out/accuracy.log" | head -n 120
  echo "== bench NN"; grep -E '^\s*[0-9]+x' "$out/bench-nn.log" | head -n 200
  echo "== bench transposes"; grep -E '^\s*[0-9]+x' "$out/bench-trans.log"
  echo "== SASS mix (first instance of each tensor-core kernel)"
  for f in k06_mma_tf32 k07_wgmma_tf32; do echo "-- $f"; head -n 12 "$out/$f-mix.txt" 2>/dev/null; done
  echo "== ncu"; grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|Registers Per|Achieved Occupancy|No Eligible|Shared Memory|Bank|L2 Hit|Executed Ipc" "$out"/ncu-*.txt 2>/dev/null | head -n 30
} | tee "$out/table.txt"
mv "$out"/*.json "$out/table.txt" "$top/" 2>/dev/null
tar -C "$out" -czf "$top/0-logs.tgz" . && rm -rf "$out"
