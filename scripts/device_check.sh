#!/usr/bin/env bash
# Everything a GPU machine must confirm, in one call: a plain build, the whole test
# suite (GPU tests run for real there), `tilegemm verify`, compute-sanitizer memcheck and
# racecheck on a few cases of every rung, then the benchmark suites saved as JSON.
# Logs and results go under ${OUT:-device-out}; a short table is printed last.
#
#   scripts/device_check.sh [--no-bench] [--suite quick|squares|awkward|transposes|all]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-device-out}
mkdir -p "$out"
suite=all
bench=1
while (($#)); do
  case $1 in
    --no-bench) bench=0 ;;
    --suite) suite=$2; shift ;;
    *) echo "device_check: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

build=${BUILD_DIR:-build-device}
# On the device a skipped GPU test means a broken set-up: make every skip a failure.
export TILEGEMM_REQUIRE_GPU=1
status() { printf '%-28s %s\n' "$1" "$2" >>"$out/summary.txt"; }
: >"$out/summary.txt"

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt" 2>&1
# A plain build, as a user would make it: no set-up script (the machine is offline and has
# what it has; missing optional test tools make their tests skip, never the build fail).  The
# default architectures include sm_90a, so Hopper's wgmma rungs are built.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${TG_CUDA_ARCH:+-DTG_CUDA_ARCH="$TG_CUDA_ARCH"} \
  -DPython3_EXECUTABLE="$(command -v python3)" >"$out/build.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" >>"$out/build.log" 2>&1
status build "$([ $? -eq 0 ] && echo ok || echo FAILED)"

(cd "$build" && ctest --output-on-failure -j4) >"$out/ctest.log" 2>&1
status ctest "$(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -n 1)"

"$build/tilegemm" verify >"$out/verify.log" 2>&1
status verify "$([ $? -eq 0 ] && echo PASS || echo FAIL)"

if command -v compute-sanitizer >/dev/null 2>&1; then
  for tool in memcheck racecheck; do
    for algo in $("$build/tilegemm" algos | awk 'NR > 2 && $1 != "(this" {print $1}'); do
      # A few cases off every tile size, each a single verify run: the sanitizers are slow.
      clean=1
      for case in "--layout row --trans NN --shape 33x17x45 --misalign" \
                  "--layout col --trans TT --shape 130x67x129 --batch 3 --beta 0.5" \
                  "--layout row --trans NT --shape 257x255x1000 --memory device"; do
        # shellcheck disable=SC2086
        compute-sanitizer --tool "$tool" --error-exitcode 3 \
          "$build/tilegemm" verify --algo "$algo" $case >>"$out/sanitizer.log" 2>&1 || clean=0
      done
      status "$tool $algo" "$([ $clean -eq 1 ] && echo clean || echo ERRORS)"
    done
  done
else
  status sanitizer "compute-sanitizer not found"
fi

if ((bench)); then
  "$build/tilegemm" bench --suite "$suite" --save >"$out/bench.log" 2>&1
  status "bench $suite" "$([ $? -eq 0 ] && echo ok || echo 'FAILED or MISMATCH')"
  cp bench/results/*.json "$out/" 2>/dev/null
fi
cat "$out/summary.txt"
