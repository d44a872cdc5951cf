# The set-up the device scripts share (device_check.sh, device_plan_judge.sh), sourced from the
# project root:  device_setup DEFAULT_DEADLINE STATUS_WIDTH
#   top      where results go (${OUT:-device-out}); out: its logs/ folder
#   build    the build folder (${BUILD_DIR:-build-device})
#   deadline seconds after the script's start (DEADLINE, else the default); left() says how
#            many remain
#   gpu_counts  the GPU counts of a scaling run (below)
#   status   a line of the summary (logs/summary.txt), printed as it is written
# GPU tests must not skip there (TILEGEMM_REQUIRE_GPU), and CUDA's tools are on the PATH.
device_setup() {
  top=${OUT:-device-out}
  out=$top/logs
  mkdir -p "$out"
  build=${BUILD_DIR:-build-device}
  deadline=${DEADLINE:-$1}
  status_width=$2
  summary=$out/summary.txt
  : >"$summary"
  export TILEGEMM_REQUIRE_GPU=1 PATH=$PATH:/usr/local/cuda/bin
}
left() { echo $((deadline - SECONDS)); }
# Configures and builds the CLI and the CTest programs named ($@) for the H100 (sm_90a) into
# $build, writes a status line (return code, seconds) and sets cli to the CLI's path; with
# PREBUILT_CLI, that CLI instead, built elsewhere (nothing is built).
device_build() {
  local start=$SECONDS
  if [ -n "${PREBUILT_CLI:-}" ]; then # a CLI built elsewhere for sm_90a, carried in
    cli=$PREBUILT_CLI
    status build "prebuilt: $cli"
    return
  fi
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTG_CUDA_ARCH=90a >"$out/build.log" 2>&1 &&
    cmake --build "$build" -j"$(nproc)" --target tilegemm_cli "$@" >>"$out/build.log" 2>&1
  status build "rc $? in $((SECONDS - start)) s"
  cli=$build/tilegemm
}
# The GPU counts a scaling run measures: GPU_COUNTS (e.g. 1,2,4), else 1, 2, 4, ... below the
# GPUs present and that number (1,2,4 on 4 GPUs, 1,2,4,6 on 6); empty without a GPU.
gpu_counts() {
  local gpus n list=
  gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
  for ((n = 1; n < gpus; n *= 2)); do list+="$n,"; done
  ((gpus > 0)) && list+=$gpus
  echo "${GPU_COUNTS:-$list}"
}
status() { printf "%-${status_width}s %s\n" "$1" "$2" | tee -a "$summary"; }
# The GPU tests of the rungs named in $1 (test_gpu_rungs.<rung>: every layout, transposes,
# misaligned pointers, odd leading dimensions, batches, beta != 0, special values) and of the
# CTest names in $2 (a regex, may be empty), side by side; then `tilegemm verify --quick` of
# each rung (verify_rungs).  Uses $build, $out and $cli (device_build).
rung_tests() {
  local regex="test_gpu_rungs\\.($(echo $1 | tr ' ' '|'))"
  [ -n "${2:-}" ] && regex="$regex|$2"
  timeout "$(left)" ctest --test-dir "$build" -R "^($regex)\$" -j4 --output-on-failure \
    >"$out/ctest.log" 2>&1
  status "ctest (GPU tests)" \
    "rc $? ($(grep -E "tests passed|tests failed" "$out/ctest.log" | tail -1))"
  verify_rungs "$1"
}
# `tilegemm verify --quick` of each rung named in $1, with the CLI at $cli.
verify_rungs() {
  local r
  for r in $1; do
    timeout 120 "$cli" verify --quick --algo "$r" >"$out/verify-$r.log" 2>&1
    status "verify --quick $r" "rc $?"
  done
}
