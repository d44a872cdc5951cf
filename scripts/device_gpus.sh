#!/usr/bin/env bash
# Past one GPU, in one call on a host of several GPUs: the README's test command
# (scripts/test.sh, GPU tests required) in a build the two steps after it reuse, then
# scripts/device_host_gpus.sh (host operands over the GPUs) and scripts/device_torch_dist.sh
# (tilegemm.torch under torch.distributed), each within its share of the time.  Under
# ${OUT:-device-out}: test.log, host.tgz and dist.tgz (each step's own files), table.txt.
#
#   TILEGEMM_COMMIT=abc1234 scripts/device_gpus.sh   environment: DEADLINE (seconds, default
#                                                     570), TEST_SHARE, HOST_SHARE (seconds
#                                                     for the first two steps; the rest goes
#                                                     to the last)
set -uo pipefail
cd "$(dirname "$0")/.."
top=${OUT:-device-out}
mkdir -p "$top"
deadline=${DEADLINE:-570}
export BUILD_DIR=${BUILD_DIR:-build-device}
export TILEGEMM_COMMIT=${TILEGEMM_COMMIT:-unknown} TG_COMMIT=${TILEGEMM_COMMIT:-unknown}
start=$SECONDS
TILEGEMM_REQUIRE_GPU=1 timeout "${TEST_SHARE:-240}" scripts/test.sh >"$top/test.log" 2>&1
test_rc=$?
test_line="scripts/test.sh rc $test_rc in $((SECONDS - start)) s: $(grep -E 'tests passed|tests failed' "$top/test.log" | tail -n 1)"
OUT=$top/host DEADLINE=$((${HOST_SHARE:-150})) scripts/device_host_gpus.sh >"$top/host.out" 2>&1
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
