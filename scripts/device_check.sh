#!/usr/bin/env bash
# Everything a GPU machine must confirm, in one call: a plain build, the test suite (GPU tests
# run for real there, and a skip is a failure), `tilegemm verify` on the GPU rungs,
# compute-sanitizer memcheck, racecheck, synccheck and initcheck, then the benchmark suite saved
# as JSON.
# Results go under ${OUT:-device-out} (the JSON, the tuned table, a summary, and every log
# packed into 0-logs.tgz); a short table is printed last.
#
#   scripts/device_check.sh [--no-bench] [--tune] [--suite quick|squares|awkward|transposes|all]
#     --tune    first time the candidate rungs on the suite and write tuning/sm_<cc>.tsv, then
#               rebuild (the table is embedded) and time `auto` in the fp32 and strict modes
#   scripts/device_check.sh --readme [--cold-builds]
#     --readme       the README's two commands as a new user meets them: a fresh clone, made
#                    without a network, then scripts/run.sh and scripts/test.sh exactly as
#                    written, with apt-get and pip cut off and TILEGEMM_REQUIRE_GPU=1
#     --cold-builds  cold builds of everything, -j<cores>: for the GPU found here (the
#                    default) and the portable list (TG_CUDA_ARCH=all)
#     Both write their times to first-run.json and a table to table.txt under $OUT, and
#     their logs into 0-logs.tgz; nothing else runs.  Within a 10-minute call, run them as two
#     calls (--readme, then --cold-builds), with DEADLINE set; README_COMMANDS=scripts/test.sh
#     (or scripts/run.sh) runs one command, for a third call where one cannot hold both.
# Environment, to fit a time-limited machine:
#   TG_CUDA_ARCH      architectures to build (default: the build's own, sm_90a included)
#   CTEST_REGEX       tests to run (default: all); CTEST_TIMEOUT caps them, in seconds
#   TUNE_ALGOS        the candidates --tune times (default: the FFMA, mma and TMA wgmma rungs)
#   SANITIZE_ALGOS    rungs for compute-sanitizer, comma-separated (default: all)
#   SANITIZE_TOOLS    its tools, space-separated (default: memcheck racecheck synccheck initcheck)
#   DEADLINE          seconds after which the remaining steps are skipped (default: none)
set -uo pipefail
cd "$(dirname "$0")/.."
top=${OUT:-device-out}
out=$top/logs
mkdir -p "$out"
suite=all
bench=1
tune=0
readme=0
cold_builds=0
while (($#)); do
  case $1 in
    --no-bench) bench=0 ;;
    --tune) tune=1 ;;
    --readme) readme=1 ;;
    --cold-builds) cold_builds=1 ;;
    --suite) suite=$2; shift ;;
    *) echo "device_check: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

if ((readme || cold_builds)); then
  exec scripts/first_run_check.sh "$top" "$readme" "$cold_builds"
fi

build=${BUILD_DIR:-build-device}
# On the device a skipped GPU test means a broken set-up: make every skip a failure.
export TILEGEMM_REQUIRE_GPU=1
summary="$top/summary.txt"
: >"$summary"
status() { printf '%-34s %s\n' "$1" "$2" >>"$summary"; }
# Seconds left before DEADLINE (a large number without one); a step gets at most that.
left() { if [ -n "${DEADLINE:-}" ]; then echo $((DEADLINE - SECONDS)); else echo 100000; fi; }
run_step() { # name, then the command; skipped once the deadline has passed
  local name=$1
  shift
  if (($(left) < 10)); then
    status "$name" "skipped (deadline)"
    return 1
  fi
  timeout "$(left)" "$@"
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt" 2>&1
# A plain build, as a user would make it: no set-up script (the machine is offline and has
# what it has; missing optional test tools make their tests skip, never the build fail).  The
# default architectures include sm_90a, so Hopper's wgmma rungs are built.
configure() {
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${TG_CUDA_ARCH:+-DTG_CUDA_ARCH="$TG_CUDA_ARCH"} \
    -DPython3_EXECUTABLE="$(command -v python3)" >>"$out/build.log" 2>&1
}
configure && cmake --build "$build" -j"$(nproc)" >>"$out/build.log" 2>&1
status build "$([ $? -eq 0 ] && echo ok || echo FAILED)"
cli=$build/tilegemm

# The test suite first: a rung the benchmark times has passed it.  CTEST_TIMEOUT caps it.
(cd "$build" && run_step ctest timeout "${CTEST_TIMEOUT:-100000}" ctest --output-on-failure -j4 \
  ${CTEST_REGEX:+-R "$CTEST_REGEX"}) >"$out/ctest.log" 2>&1
status ctest "$(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -n 1)"
grep -E '^\s*[0-9]+/[0-9]+ Test' "$out/ctest.log" >>"$summary"

if ((bench)); then
  if ((tune)); then
    candidates=${TUNE_ALGOS:-auto,warptile64,warptile128_l2,ffma128x256,ffma128x128,mma3xtf32,mmatf32,tma_wgmma3xtf32,tma_wgmmatf32}
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d .)
    run_step tune "$cli" bench --suite "$suite" --algo "$candidates" --repeats 5 --warmup 2 \
      --tune --tune-file "tuning/sm_$cc.tsv" --json "$top/bench-$suite-candidates.json" \
      >"$out/bench-candidates.log" 2>&1
    status "tune ($suite, candidates)" "rc $?"
    cp "tuning/sm_$cc.tsv" "$top/" 2>/dev/null
    # The table is embedded at build time: rebuild so that `auto` below uses it.
    configure && cmake --build "$build" -j"$(nproc)" --target tilegemm_cli >>"$out/build.log" 2>&1
    status "rebuild with the tuned table" "$([ $? -eq 0 ] && echo ok || echo FAILED)"
  fi
  for math in fp32 strict; do
    run_step "bench $math" "$cli" bench --suite "$suite" --algo auto --math "$math" \
      --json "$top/bench-$suite-auto-$math.json" >"$out/bench-$math.log" 2>&1
    status "bench $suite, auto in $math" "rc $?"
  done
fi

run_step verify "$cli" verify --gpu-only >"$out/verify.log" 2>&1
status "verify --gpu-only" "$([ $? -eq 0 ] && echo PASS || echo "FAIL or cut (see verify.log)")"

if command -v compute-sanitizer >/dev/null 2>&1; then
  algos=${SANITIZE_ALGOS:-$("$cli" algos | awk 'NR > 2 && $1 != "(this" && $1 != "auto" {print $1}' | paste -sd,)}
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
    for algo in ${algos//,/ }; do
      # A few cases off every tile size, each a single verify run: the sanitizers are slow.
      # A case the rung refuses (the short-k rungs take k <= 256) is left out, not an error.
      clean=1 refused=0
      for case in "--layout row --trans NN --shape 33x17x45 --misalign" \
                  "--layout col --trans TT --shape 130x67x129 --batch 3 --beta 0.5" \
                  "--layout row --trans NT --shape 257x255x1000 --memory device"; do
        # shellcheck disable=SC2086
        run_step "$tool $algo" compute-sanitizer --tool "$tool" --error-exitcode 3 \
          "$cli" verify --algo "$algo" $case >"$out/sanitizer-case.log" 2>&1
        rc=$?
        cat "$out/sanitizer-case.log" >>"$out/sanitizer.log"
        if [ $rc -ne 0 ] && [ $rc -ne 3 ] &&
          grep -q "constraints refused every case" "$out/sanitizer-case.log"; then
          refused=$((refused + 1))
        elif [ $rc -ne 0 ]; then
          clean=0
        fi
      done
      rm -f "$out/sanitizer-case.log"
      status "$tool $algo" "$([ $clean -eq 1 ] && echo clean || echo 'ERRORS or cut')$(
        [ $refused -gt 0 ] && echo " ($refused of 3 cases refused by the rung)")"
    done
  done
else
  status sanitizer "compute-sanitizer not found"
fi

{
  cat "$summary"
  echo "== auto against cuBLAS (fp32 and strict modes)"
  grep -hE '^\s*[0-9]+x[0-9]+x[0-9]+ .* (auto|cublas) ' "$out"/bench-fp32.log "$out"/bench-strict.log 2>/dev/null
  grep -hE 'summary|geomean|geometric' "$out"/bench-*.log 2>/dev/null
} | tee "$top/table.txt"
tar -C "$out" -czf "$top/0-logs.tgz" . && rm -rf "$out"
