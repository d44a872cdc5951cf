#!/usr/bin/env bash
# tilegemm.torch under torch.distributed on a machine with GPUs, in one call of about 7
# minutes: build libtilegemm for the GPU found (native); pytest on
# python/tests/test_distributed.py (the DTensor rules, placements on fake meshes, the gloo
# cases, then the NCCL cases on two GPUs); then examples/torch_tp_train.py under torchrun at
# each GPU count, tensor parallel and FSDP2, tilegemm against torch (TF32 off), the time left
# after pytest shared between those runs.  Results under ${OUT:-device-out}:
# torch-tp-N.json and torch-fsdp-N.json for each count N, 0-logs.tgz, table.txt; a table last
# (bench/plot.py --scaling: step times, speedups, and each library's scaling over its 1-GPU
# step).
#
#   TG_COMMIT=$(git rev-parse --short HEAD) GPU_COUNTS=1,2,4 scripts/device_torch_dist.sh
# Environment: GPU_COUNTS (the counts, e.g. 1,2,4; default: 1, 2, 4, ... below the GPUs present,
# and that number; counts above that are skipped), BUILD_DIR (default build-device), DEADLINE
# (seconds, default 400), TG_COMMIT (recorded in the JSON; the device copy needs no git),
# PYTHON (default python3), STEPS (the example's steps, default 50), EXAMPLE_ARGS (more flags
# for it, e.g. smaller sizes: "--width 4096 --hidden 16384 --batch 2048").
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
# The counts to train at (gpu_counts), ascending, each once, none above the GPUs present.
counts=()
IFS=, read -ra asked <<<"$(gpu_counts)"
for n in $(printf '%s\n' "${asked[@]}" | sort -nu); do
  if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
    status "GPU count $n" "skipped: not a count of GPUs"
  elif ((n > gpus)); then
    status "GPU count $n" "skipped: $gpus GPU(s) present"
  else
    counts+=("$n")
  fi
done
status "GPU counts" "${counts[*]:-none}"
runs=$((2 * ${#counts[@]})) # the example's runs still to come
per_run=35                  # seconds a run takes at the default sizes, torchrun's start included

start=$SECONDS
timeout "$(budget 150 $((runs * per_run)))" "$python" -m pytest -q -rs -p no:cacheprovider \
  python/tests/test_distributed.py --junitxml="$out/distributed.xml" >"$out/distributed.log" 2>&1
status "pytest test_distributed.py" "rc $? in $((SECONDS - start)) s: $(grep -E '[0-9]+ (passed|failed|skipped)' "$out/distributed.log" | tail -n 1)"

if command -v torchrun >/dev/null; then launch=(torchrun); else launch=("$python" -m torch.distributed.run); fi
train() { # mode, GPU count; more flags after them.  Each run gets an equal share of the time
  # left (less 5 s for the table), so a run that ends early leaves more to those after it.
  local mode=$1 n=$2 start=$SECONDS limit
  shift 2
  limit=$((($(left) - 5) / runs))
  runs=$((runs - 1))
  if ((limit < 10)); then
    status "torch_tp_train.py ($mode, $n GPU(s))" "skipped: the deadline has passed"
    return
  fi
  # shellcheck disable=SC2086 # EXAMPLE_ARGS: flags, split on purpose
  timeout "$limit" "${launch[@]}" --nproc-per-node "$n" examples/torch_tp_train.py "$@" \
    --steps "${STEPS:-50}" ${EXAMPLE_ARGS:-} --json "$top/torch-$mode-$n.json" \
    >"$out/train-$mode-$n.log" 2>&1
  status "torch_tp_train.py ($mode, $n GPU(s))" "rc $? in $((SECONDS - start)) s of $limit"
}
for n in "${counts[@]}"; do
  train tp "$n"
  train fsdp "$n" --fsdp
done

{
  echo "== summary (commit $TG_COMMIT)"
  cat "$summary"
  echo "== failures (test_distributed)"
  grep -E "^(FAILED|ERROR)" "$out/distributed.log" | head -n 20
  echo "== examples/torch_tp_train.py at ${counts[*]:-no} GPU(s) (scaling: the step at 1 GPU over the step at N)"
  "$python" bench/plot.py --scaling "$top"
} >"$top/table.txt" 2>&1
tar -C "$out" -czf "$top/0-logs.tgz" . && rm -rf "$out"
cat "$top/table.txt"
