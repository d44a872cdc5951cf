# The set-up the device scripts share (device_check.sh, device_plan_judge.sh), sourced from the
# project root:  device_setup DEFAULT_DEADLINE STATUS_WIDTH
#   top      where results go (${OUT:-device-out}); out: its logs/ folder
#   build    the build folder (${BUILD_DIR:-build-device})
#   deadline seconds after the script's start (DEADLINE, else the default); left() says how
#            many remain
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
status() { printf "%-${status_width}s %s\n" "$1" "$2" | tee -a "$summary"; }
