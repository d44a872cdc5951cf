#!/usr/bin/env bash
# tilegemm.torch on a GPU machine, in one call of at most 8 minutes: build libtilegemm for the
# GPU found (native); pytest on python/tests/test_torch.py (ops against float64, backward,
# torch.compile, CUDA graphs, routing, math scoping); the per-call overhead and timing
# benchmark (bench/torch_overhead.py); the training example (examples/torch_train.py); then
# the other Python suites.  Results under ${OUT:-device-out}: torch-overhead.json,
# torch-train.json, torch-train.png, 0-logs.tgz, table.txt; a short table last.
#
#   TG_COMMIT=$(git rev-parse --short HEAD) scripts/device_torch.sh
# Environment: BUILD_DIR (default build-device), DEADLINE (seconds, default 420), TG_COMMIT
# (recorded in the JSON where the tree has no .git), PYTHON (default python3).
set -uo pipefail
cd "$(dirname "$0")/.." || exit
. scripts/device_common.sh
device_setup 420 36
python=${PYTHON:-python3}
export TG_COMMIT=${TG_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt" 2>&1
"$python" -c "import torch, numpy, pytest; print('torch', torch.__version__, 'numpy',
numpy.__version__, 'pytest', pytest.__version__)" >"$out/python.txt" 2>&1
status "python" "$(tail -n 1 "$out/python.txt")"

start=$SECONDS
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$(command -v "$python")" \
  >"$out/build.log" 2>&1 && cmake --build "$build" -j"$(nproc)" --target tilegemm >>"$out/build.log" 2>&1
status build "rc $? in $((SECONDS - start)) s ($(grep -m1 -o 'architectures [^)]*' "$out/build.log"))"
export PYTHONPATH=$PWD/python TILEGEMM_LIBRARY=$PWD/$build/libtilegemm.so PYTHONDONTWRITEBYTECODE=1

budget() { # seconds for the next step: at most $1, leaving $2 for what follows
  local b=$(($(left) - $2))
  ((b > $1)) && b=$1
  ((b < 10)) && b=10
  echo "$b"
}
pytest_suite() { # name, file, timeout
  local start=$SECONDS
  timeout "$3" "$python" -m pytest -q -rs -p no:cacheprovider "python/tests/$2" \
    --junitxml="$out/$1.xml" >"$out/$1.log" 2>&1
  local rc=$?
  status "pytest $2" "rc $rc in $((SECONDS - start)) s: $(grep -E '[0-9]+ (passed|failed|skipped)' "$out/$1.log" | tail -n 1)"
}

pytest_suite torch test_torch.py "$(budget 200 200)"
start=$SECONDS
timeout "$(budget 100 130)" "$python" bench/torch_overhead.py --json "$top/torch-overhead.json" \
  >"$out/overhead.log" 2>&1
status "bench/torch_overhead.py" "rc $? in $((SECONDS - start)) s"
start=$SECONDS
timeout "$(budget 150 50)" "$python" examples/torch_train.py --json "$top/torch-train.json" \
  --png "$top/torch-train.png" >"$out/train.log" 2>&1
status "examples/torch_train.py" "rc $? in $((SECONDS - start)) s"
for suite in numpy layouts gpu; do
  pytest_suite "$suite" "test_$suite.py" "$(budget 60 15)"
done

{
  echo "== summary (commit $TG_COMMIT)"
  cat "$summary"
  echo "== failures (test_torch)"
  grep -E "^(FAILED|ERROR)" "$out/torch.log" | head -n 20
  echo "== bench/torch_overhead.py"
  tail -n 12 "$out/overhead.log"
  echo "== examples/torch_train.py"
  tail -n 7 "$out/train.log"
} >"$top/table.txt" 2>&1
tar -C "$out" -czf "$top/0-logs.tgz" . && rm -rf "$out"
cat "$top/table.txt"
