#!/usr/bin/env bash
# Autotuning on the GPU, in one call: build the CLI and test_gpu_autotune for the H100, run that
# test (and cli_tune_gpu), then autotuning's regret on a warm cache: every rung timed beside
# `auto` with TILEGEMM_AUTOTUNE=1 on COUNT calls of each of the corpus's held-out SEEDS (its
# first call of each key times the candidates), auto and each arithmetic's two fastest entries
# timed again in turn (--recheck 2), bench/regret.py of it.  JSON and logs under
# ${OUT:-device-out}; the regret tables last.  TESTS=0 skips the tests.
#
#   scripts/device_autotune.sh        environment: SEEDS (default 4), COUNT (default 40),
#                                     TESTS (1), DEADLINE (seconds, 560)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device_common.sh
device_setup 560 40
if [ "${TESTS:-1}" = 1 ]; then
  device_build test_gpu_autotune
  timeout -k 5 "$(left)" ctest --test-dir "$build" -R '^(test_gpu_autotune|cli_tune_gpu)$' \
    --output-on-failure >"$out/ctest.log" 2>&1
  status "ctest (autotuning)" "rc $? ($(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1))"
  grep -E "Test +#.*sec" "$out/ctest.log" | tee -a "$summary"
else
  device_build
fi
: >"$out/regret.txt"
for seed in ${SEEDS:-4}; do
  TILEGEMM_AUTOTUNE=1 TILEGEMM_CACHE_DIR=$(mktemp -d) timeout -k 5 "$(left)" "$cli" bench \
    --suite random --seed "$seed" --count "${COUNT:-40}" --algo all --split-k pow2 --prune 3 \
    --repeats 5 --warmup 1 --min-timed-ms 2 --recheck 2 --math fp32 \
    --json "$top/autotune-seed$seed-fp32.json" >"$out/autotune-seed$seed.log" 2>&1
  status "autotune, seed $seed x ${COUNT:-40}, every rung" "rc $? at $SECONDS s"
  python3 bench/regret.py "$top/autotune-seed$seed-fp32.json" \
    --json "$top/autotune-seed$seed-regret.json" >>"$out/regret.txt" 2>&1
done
{ echo "== summary"; cat "$summary"; cat "$out/regret.txt"; } | tee "$top/table.txt"
tar -C "$out" -czf "$top/logs.tgz" . && rm -rf "$out"
