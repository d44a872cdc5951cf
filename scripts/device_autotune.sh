#!/usr/bin/env bash
# Autotuning on the GPU, in one call: build the CLI and test_gpu_autotune for the H100, run that
# test (and cli_tune_gpu), then autotuning's regret on a warm cache: every rung timed beside
# `auto` with TILEGEMM_AUTOTUNE=1 on COUNT calls of the corpus's held-out seed 4 (its first call
# of each key times the candidates), bench/regret.py of it.  JSON and logs under
# ${OUT:-device-out}; the regret table last.
#
#   scripts/device_autotune.sh        environment: COUNT (default 40), DEADLINE (seconds, 560)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device_common.sh
device_setup 560 40
device_build test_gpu_autotune
timeout -k 5 "$(left)" ctest --test-dir "$build" -R '^(test_gpu_autotune|cli_tune_gpu)$' \
  --output-on-failure >"$out/ctest.log" 2>&1
status "ctest (autotuning)" "rc $? ($(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1))"
grep -E "Test +#.*sec" "$out/ctest.log" | tee -a "$summary"
TILEGEMM_AUTOTUNE=1 TILEGEMM_CACHE_DIR=$(mktemp -d) timeout -k 5 "$(left)" "$cli" bench \
  --suite random --seed 4 --count "${COUNT:-40}" --algo all --split-k pow2 --prune 3 --repeats 5 \
  --warmup 1 --min-timed-ms 2 --math fp32 --json "$top/autotune-seed4-fp32.json" \
  >"$out/autotune.log" 2>&1
status "autotune, seed 4 x ${COUNT:-40}, every rung" "rc $? at $SECONDS s"
python3 bench/regret.py "$top/autotune-seed4-fp32.json" --json "$top/autotune-regret.json" \
  >"$out/regret.txt" 2>&1
{ echo "== summary"; cat "$summary"; cat "$out/regret.txt"; } | tee "$top/table.txt"
tar -C "$out" -czf "$top/logs.tgz" . && rm -rf "$out"
