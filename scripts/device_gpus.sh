#!/usr/bin/env bash
# Past one GPU, in one call on a host of several GPUs: the README's test command
# (scripts/test.sh, GPU tests required) in a build the two steps after it reuse, then
# scripts/device_host_gpus.sh (host operands over the GPUs) and scripts/device_torch_dist.sh
# (tilegemm.torch under torch.distributed), each within its share of the time, both at each GPU
# count of GPU_COUNTS.  Under ${OUT:-device-out}: test.log, host.tgz and dist.tgz (each step's
# own files), table.txt.
#
#   TILEGEMM_COMMIT=abc1234 GPU_COUNTS=1,2,4 scripts/device_gpus.sh
# Environment: DEADLINE (seconds, default 570); TEST_SHARE (seconds for scripts/test.sh,
# default 240; 0 skips it, and the next step builds what it needs); HOST_SHARE (seconds for the
# host operands, default 45% of what is left after the tests; the rest goes to the last step);
# GPU_COUNTS, SHAPES, REPS, XT_REPS, STEPS, EXAMPLE_ARGS (the two steps' own, see their headers).
set -uo pipefail
cd "$(dirname "$0")/.." || exit
top=${OUT:-device-out}
mkdir -p "$top"
deadline=${DEADLINE:-570}
export BUILD_DIR=${BUILD_DIR:-build-device}
export TILEGEMM_COMMIT=${TILEGEMM_COMMIT:-unknown}
export TG_COMMIT=$TILEGEMM_COMMIT
start=$SECONDS
if [ "${TEST_SHARE:-240}" = 0 ]; then
  test_line="scripts/test.sh skipped (TEST_SHARE=0)"
  : >"$top/test.log"
else
  TILEGEMM_REQUIRE_GPU=1 timeout "${TEST_SHARE:-240}" scripts/test.sh >"$top/test.log" 2>&1
  test_rc=$?
  test_line="scripts/test.sh rc $test_rc in $((SECONDS - start)) s: $(grep -E 'tests passed|tests failed' "$top/test.log" | tail -n 1)"
fi
host_share=${HOST_SHARE:-$(((deadline - (SECONDS - start)) * 45 / 100))}
OUT=$top/host DEADLINE=$host_share scripts/device_host_gpus.sh >"$top/host.out" 2>&1
OUT=$top/dist DEADLINE=$((deadline - (SECONDS - start) - 10)) scripts/device_torch_dist.sh \
  >"$top/dist.out" 2>&1
{
  echo "== $(nvidia-smi -L 2>/dev/null | wc -l) GPUs: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | tr -s ' ' | paste -sd, -)"
  echo "$test_line"
  grep -A3 -E "^[0-9]+% tests passed" "$top/test.log" | head -4
  grep -E "\(Failed\)|\*\*\*Failed|Timeout" "$top/test.log" | head -10
  echo "== host operands"
  sed -n '/== summary/,$p' "$top/host.out"
  echo "== torch.distributed"
  sed -n '/== summary/,$p' "$top/dist.out"
} | tee "$top/table.txt"
for step in host dist; do
  mv "$top/$step.out" "$top/$step/" 2>/dev/null
  tar -C "$top" -czf "$top/$step.tgz" "$step" && rm -rf "${top:?}/$step"
done
