#!/usr/bin/env bash
# The stream rungs (rung 10) on the GPU, in one call: build, their GPU tests, the copy
# bandwidth, the thin shapes against the skinny rungs and cuBLAS (split-K slice counts
# included), and unsplit sweeps of the tuning seeds (1 and 2) for bench/fit_model.py.
# JSON under ${OUT:-device-out}; a short table last.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device_common.sh
device_setup 540 40
device_build test_gpu_rungs test_gpu_split_k
rungs=${RUNGS:-stream8 stream16 stream32 stream64}
for r in $rungs; do
  timeout 120 "$build/tests/test_gpu_rungs" --algo "$r" >"$out/test-$r.log" 2>&1
  status "test_gpu_rungs $r" "rc $?"
  timeout 60 "$cli" verify --quick --algo "$r" >"$out/verify-$r.log" 2>&1
  status "verify --quick $r" "rc $?"
done
timeout 120 "$build/tests/test_gpu_split_k" >"$out/test_gpu_split_k.log" 2>&1
status test_gpu_split_k "rc $?"
python3 - >"$out/copy.log" 2>&1 <<'PY'
import torch
x = torch.empty(1 << 29, device="cuda"); y = torch.empty_like(x)
for _ in range(3): y.copy_(x)
s, e = torch.cuda.Event(True), torch.cuda.Event(True); ts = []
for _ in range(20):
    s.record(); y.copy_(x); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
ts.sort(); print(f"copy 2 GiB: {2 * x.numel() * 4 / ts[10] / 1e9:.0f} GB/s read+write (median of 20)")
PY
status "copy bandwidth" "$(tail -1 "$out/copy.log")"
thin="23375x27x8584 27x23375x8584 100000x32x512 16970x9x10183 65536x8x4096 28913x41x1601
  1878x46x10661 32x32x100000 12x156x32461 234x13x23999 8192x64x8192 200000x16x2048"
comma=$(echo $rungs | tr ' ' ',')
# shellcheck disable=SC2086
timeout "$(left)" "$cli" bench $thin --trans NN,TN,NT --algo "$comma,skinny32x32,skinny64x32" \
  --split-k 1,2,4,8,16 --repeats 7 --json "$top/thin.json" >"$out/thin.log" 2>&1
status "thin shapes" "rc $? at $SECONDS s"
for s in ${SWEEP_SEEDS-1 2}; do
  timeout "$(left)" "$cli" bench --suite random --seed $s --count 300 --algo "$comma" --split-k 1 \
    --repeats 3 --warmup 1 --json "$top/sweep-seed$s.json" >"$out/sweep-$s.log" 2>&1
  status "sweep seed $s" "rc $? at $SECONDS s"
done
{
  echo "== summary"; cat "$summary"
  grep -E "23375x27x8584|100000x32x512|65536x8x4096" "$out/thin.log" | head -80
} | tee "$top/table.txt"
tar -C "$top" -czf "$top/0-json.tgz" --remove-files $(cd "$top" && ls ./*.json)
tar -C "$out" -czf "$top/0-logs.tgz" . && rm -rf "$out"
