#!/usr/bin/env bash
# tilegemm.torch under torch.distributed on a machine with 2 or more GPUs, in one
# call of about 7 minutes: build libtilegemm for the GPU found (native); pytest on
# python/tests/test_distributed.py (the DTensor rules, placements on fake meshes, the gloo
# cases, then the NCCL cases on two GPUs); examples/torch_tp_train.py under torchrun on every
# GPU, tensor parallel then FSDP2, tilegemm against torch (TF32 off).  Results under
# ${OUT:-device-out}: torch-tp.json, torch-fsdp.json, 0-logs.tgz, table.txt; a short table last.
#
#   TG_COMMIT=$(git rev-parse --short HEAD) scripts/device_torch_dist.sh
# Environment: BUILD_DIR (default build-device), DEADLINE (seconds, default 400), TG_COMMIT
# (recorded in the JSON; the device copy needs no git), PYTHON (default python3), STEPS (the
# example's steps, default 50), EXAMPLE_ARGS (more flags for it, e.g. smaller sizes:
# "--width 4096 --hidden 16384 --batch 2048").
set -uo pipefail
cd "$(dirname "$0")/.." || exit
. scripts/device_common.sh
device_setup 400 36
python=${PYTHON:-python3}
export TG_COMMIT=${TG_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt" 2>&1
nvidia-smi topo -m >>"$out/gpu.txt" 2>&1
"$python" -c "import torch, torch.distributed as d; print('torch', torch.__version__, 'nccl',
'.'.join(map(str, torch.cuda.nccl.version())) if d.is_nccl_available() else 'none')" \
  >"$out/python.txt" 2>&1
status GPUs "$gpus ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | tr -s ' ' | paste -sd, -))"
status python "$(tail -n 1 "$out/python.txt")"

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
start=$SECONDS
timeout "$(budget 150 140)" "$python" -m pytest -q -rs -p no:cacheprovider \
  python/tests/test_distributed.py --junitxml="$out/distributed.xml" >"$out/distributed.log" 2>&1
status "pytest test_distributed.py" "rc $? in $((SECONDS - start)) s: $(grep -E '[0-9]+ (passed|failed|skipped)' "$out/distributed.log" | tail -n 1)"

if command -v torchrun >/dev/null; then launch=(torchrun); else launch=("$python" -m torch.distributed.run); fi
train() { # mode, timeout; more flags after them
  local mode=$1 limit=$2 start=$SECONDS
  shift 2
  # shellcheck disable=SC2086 # EXAMPLE_ARGS: flags, split on purpose
  timeout "$limit" "${launch[@]}" --nproc-per-node "$gpus" examples/torch_tp_train.py "$@" \
    --steps "${STEPS:-50}" ${EXAMPLE_ARGS:-} --json "$top/torch-$mode.json" >"$out/train-$mode.log" 2>&1
  status "torch_tp_train.py ($mode)" "rc $? in $((SECONDS - start)) s"
}
train tp "$(budget 120 65)"
train fsdp "$(budget 150 5)" --fsdp

{
  echo "== summary (commit $TG_COMMIT)"
  cat "$summary"
  echo "== failures (test_distributed)"
  grep -E "^(FAILED|ERROR)" "$out/distributed.log" | head -n 20
  echo "== examples/torch_tp_train.py ($gpus GPUs)"
  "$python" - "$top" <<'EOF'
import json, os, sys
print(f"{'mode':<6} {'torch ms':>10} {'tilegemm ms':>12} {'speedup':>8} {'max loss diff':>14} "
      f"{'relative':>9}")
for mode in ("tp", "fsdp"):
    path = os.path.join(sys.argv[1], f"torch-{mode}.json")
    if not os.path.exists(path):
        print(f"{mode:<6} (no JSON: see logs/train-{mode}.log)")
        continue
    r = json.load(open(path))
    print(f"{mode:<6} {r['runs']['torch']['step_ms']:10.2f} {r['runs']['tilegemm']['step_ms']:12.2f} "
          f"{r['speedup_tilegemm_vs_torch']:7.2f}x {r['max_loss_diff']:14.3g} "
          f"{r['max_rel_loss_diff']:9.2g}")
EOF
} >"$top/table.txt" 2>&1
tar -C "$out" -czf "$top/0-logs.tgz" . && rm -rf "$out"
cat "$top/table.txt"
