#!/usr/bin/env bash
# Rung 9 (tma_wgmma3xtf32, tma_wgmmatf32 and their variants) against rung 7 and cuBLAS on an
# H100, in one call of about 9 minutes: build the CLI for sm_90a; the kernels' registers and
# spills; `tilegemm verify` on rungs 9 and 7; compute-sanitizer racecheck and synccheck on them
# for 3 shapes (ragged edges, a transposed column-major batch, a long k); then the benchmark on
# 4096^3, 8192^3 and 4097^3, NN/NT/TN/TT at 4096^3, and 16384^3 if time is left.
# JSON under ${OUT:-device-out} (bench-*.json, res-usage.txt, 0-logs.tgz); a short table last.
#
#   scripts/device_hopper.sh
# Environment: BUILD_DIR (default build-device), DEADLINE (seconds, default 540).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device_common.sh
device_setup 540 58 # cuobjdump and compute-sanitizer come with CUDA's tools on the PATH

rung9="tma_wgmma3xtf32 tma_wgmmatf32"
variants="tma_wgmma3xtf32_p64 tma_wgmmatf32_128"
rung7="wgmma3xtf32 wgmmatf32"

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv \
  >"$out/gpu.txt" 2>&1
start=$SECONDS
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTG_CUDA_ARCH=90a >"$out/build.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" --target tilegemm_cli >>"$out/build.log" 2>&1
status build "rc $? in $((SECONDS - start)) s"
cli=$build/tilegemm
"$cli" algos >"$out/algos.txt" 2>&1

# Registers and spills of every kernel of rungs 9 and 7 (the consumers must not spill).
obj_dir=$build/CMakeFiles/tilegemm_objects.dir/src/cuda/kernels
for f in k09_tma_wgmma k07_wgmma_tf32; do
  echo "== $f" && cuobjdump -res-usage "$obj_dir/$f.cu.o" 2>&1 | grep -A1 Function |
    sed -E 's/_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_[a-z0-9_]+_cu_[0-9a-f]{8}//'
done >"$top/res-usage.txt" 2>&1
status "res-usage (res-usage.txt)" "$(grep -c 'STACK:0' "$top/res-usage.txt") kernels with no stack"

# verify: every data distribution on the quick shapes, against float64 and the strict path.
for a in $rung9 $variants $rung7; do
  timeout 45 "$cli" verify --quick --algo "$a" >"$out/verify-$a.log" 2>&1
  status "verify --quick $a" "rc $? ($(grep -cE 'FAIL' "$out/verify-$a.log") FAIL lines)"
done

# The benchmark: rungs 9 and 7 and the variants, cuBLAS SGEMM and FAST_TF32 in the same run.
algos=$(echo $rung9 $rung7 $variants | tr ' ' ',')
timeout 150 "$cli" bench 4096x4096x4096 8192x8192x8192 4097x4097x4097 --algo "$algos" \
  --repeats 10 --warmup 3 --json "$top/bench-squares.json" >"$out/bench-squares.log" 2>&1
status "bench squares" "rc $? at $SECONDS s"
timeout 90 "$cli" bench 4096x4096x4096 --trans NN,NT,TN,TT \
  --algo "$(echo $rung9 $rung7 | tr ' ' ',')" --repeats 10 --warmup 3 \
  --json "$top/bench-transposes.json" >"$out/bench-transposes.log" 2>&1
status "bench transposes" "rc $? at $SECONDS s"

# Sanitizers: racecheck and synccheck side by side (two processes), each over the rungs and
# 3 shapes: ragged edges misaligned, a transposed column-major batch with beta, a longer k.
cases=("--layout row --trans NN --shape 33x17x45 --misalign"
  "--layout col --trans TT --shape 130x67x300 --batch 3 --beta 0.5"
  "--layout row --trans NT --shape 200x129x260 --memory device")
sanitize() { # tool
  local tool=$1 log=$out/$1.log
  : >"$log"
  for algo in $rung9 wgmma3xtf32; do
    local verdict="" hazards
    for c in "${cases[@]}"; do
      # shellcheck disable=SC2086
      local budget=$((san_deadline - SECONDS))
      ((budget > 60)) && budget=60
      if ((budget < 5)); then
        verdict+="[skipped: time] "
        continue
      fi
      timeout "$budget" compute-sanitizer --tool "$tool" --error-exitcode 3 \
        "$cli" verify --algo "$algo" --data uniform $c >"$log.one" 2>&1
      local rc=$?
      hazards=$(grep -hoE '[0-9,]+ hazards? displayed \([0-9,]+ errors?, [0-9,]+ warnings?\)|ERROR SUMMARY: [0-9,]+ errors?' "$log.one" | tail -n 1)
      verdict+="[rc $rc: ${hazards:-no summary}] "
      { echo "=== $tool $algo $c (rc $rc)"; cat "$log.one"; } >>"$log"
    done
    echo "$tool $algo: $verdict" >>"$out/sanitize-verdicts.txt"
  done
  rm -f "$log.one"
}
if command -v compute-sanitizer >/dev/null 2>&1; then
  start=$SECONDS
  san_deadline=$((deadline - 60)) # leaves the table and the archive their time
  : >"$out/sanitize-verdicts.txt"
  sanitize racecheck &
  sanitize synccheck &
  wait
  status "sanitizers" "in $((SECONDS - start)) s (see below)"
else
  status sanitizers "compute-sanitizer not found"
fi

# The pre-pass's share: each kernel's duration under Nsight Compute, at 4096^3 (clocks left alone).
if command -v ncu >/dev/null 2>&1 && (($(left) > 100)); then
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    -k regex:'split_into|sgemm_tma' -c 3 "$cli" run 4096x4096x4096 --algo tma_wgmma3xtf32 >"$out/ncu-4096.log" 2>&1
  status "ncu kernel times at 4096^3" "rc $? at $SECONDS s"
fi

if (($(left) > 45)); then
  timeout $(($(left) - 20)) "$cli" bench 16384x16384x16384 --algo "$(echo $rung9 wgmma3xtf32 | tr ' ' ',')" \
    --repeats 3 --warmup 1 --json "$top/bench-16384.json" >"$out/bench-16384.log" 2>&1
  status "bench 16384^3" "rc $? at $SECONDS s"
fi

table() {
  python3 - "$top"/bench-*.json <<'EOF'
import json, sys
print("%-16s %-3s %-20s %8s %7s %7s %9s %9s" % ("shape", "op", "algo", "TFLOP/s", "xSGEMM", "xTF32", "worst", "rms"))
for path in sys.argv[1:]:
    try:
        results = json.load(open(path))["results"]
    except Exception as e:
        print(path, "unreadable:", e)
        continue
    for r in results:
        if r["algo"].startswith("cublas"):
            continue
        shape = "%dx%dx%d" % (r["m"], r["n"], r["k"])
        print("%-16s %-3s %-20s %8.1f %7.2f %7.2f %9.2g %9.2g %s" % (
            shape, r["trans"], r["algo"], r.get("tflops") or 0, r.get("ratio") or 0,
            r.get("ratio_tf32") or 0, r.get("worst_scaled_error") or 0,
            r.get("rms_rel_error") or 0, "" if r.get("status") == "OK" else r.get("status")))
    if results:
        r = results[0]
        print("%-16s cuBLAS SGEMM %.1f, FAST_TF32 %.1f TFLOP/s (first shape of %s)" % (
            "", r.get("cublas_tflops") or 0, r.get("cublas_tf32_tflops") or 0, path.split("/")[-1]))
EOF
}
{
  echo "== summary"
  cat "$summary"
  echo "== sanitizers"
  cat "$out/sanitize-verdicts.txt" 2>/dev/null
  echo "== kernel times at 4096^3 (ncu)"
  grep -E "^  [a-z].*\(|gpu__time_duration|dram__bytes" "$out/ncu-4096.log" 2>/dev/null | sed -E 's/\(const float.*//; s/\(CUtensorMap.*//'
  echo "== benchmark (xSGEMM, xTF32: ratio to cuBLAS SGEMM and FAST_TF32 in the same run)"
  table
} >"$top/table.txt" 2>&1
tar -C "$out" -czf "$top/0-logs.tgz" . && rm -rf "$out"
cat "$top/table.txt"
