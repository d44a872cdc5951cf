#!/usr/bin/env bash
# CI's sanitizer steps, run by .ci/run after the test command (scripts/test.sh):
#
#   asan  AddressSanitizer + UBSan build of the library, the CLI and every C test (the CPU path
#         and the emulated kernels, their --quick sweep; no nvcc, so it runs anywhere), then its
#         CTest suite.  Not run there: the Python suites and example_python (an interpreter
#         would need libasan preloaded), the install test (it builds an uninstrumented consumer
#         against the instrumented library) and the LD_PRELOAD ABI test (ASan's runtime must
#         come first in the library list).
#   tsan  ThreadSanitizer build of the library and test_concurrency (threads with their own
#         handles, sgemm_ from threads), without OpenMP: libgomp is not instrumented, and its
#         own synchronization would read as races.
#   fuzz  the libFuzzer target for the validator (tests/fuzz/fuzz_validate.c), a fixed number
#         of runs from a fixed seed, where clang can build it; skipped (said, never failed)
#         where it cannot.
#
#   scripts/sanitize.sh [asan] [tsan] [fuzz]      (default: all three)
#   FUZZ_RUNS=N (default 2000000), BUILD_ROOT=DIR (default build-sanitize)
set -uo pipefail
cd "$(dirname "$0")/.."
root=${BUILD_ROOT:-build-sanitize}
jobs=$(nproc)
steps=("$@")
((${#steps[@]})) || steps=(asan tsan fuzz)
failed=0
mkdir -p "$root"
report() { printf 'sanitize: %-5s %s\n' "$1" "$2"; }

# sanitized_build NAME FLAGS TARGET [CMAKE_ARGS...]: a CPU-only build with FLAGS everywhere, its
# log in $root/NAME.log (shown on failure).
sanitized_build() {
  local name=$1 flags=$2 target=$3
  shift 3
  cmake -S . -B "$root/$name" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTG_WITH_CUDA=OFF \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_Fortran_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" "$@" \
    >"$root/$name.log" 2>&1 &&
    cmake --build "$root/$name" -j"$jobs" ${target:+--target "$target"} >>"$root/$name.log" 2>&1 ||
    { tail -n 30 "$root/$name.log"; return 1; }
}

# step NAME WHAT COMMAND...: runs a step's check and records its outcome.
step() {
  local name=$1 what=$2
  shift 2
  if "$@"; then report "$name" "passed ($what)"; else report "$name" FAILED; failed=1; fi
}

asan_suite() {
  # The fences of the emulated test are its own SIGSEGV handler's: ASan leaves it alone.
  # Left out: the tests that build or run programs against the library outside this build
  # (Python, plain cc: the ASan runtime must be the first library they load), the test that runs
  # under `ulimit -v` (ASan cannot reserve its shadow memory there), and test_unload, run after
  # without leak detection: libgomp, loaded and unloaded with the library each cycle, leaves 8
  # bytes of its own start-up each time (valgrind shows the allocation in libgomp's initializer).
  sanitized_build asan "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" "" \
    -DTG_EMULATED_ARGS=--quick &&
    (cd "$root/asan" &&
      export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allow_user_segv_handler=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 &&
      ctest --output-on-failure -j"$jobs" -E '^(python_.*|example_python|blas_install_consumer|blas_abi_preload|readme_c_build_tree|readme_c_install|no_cuda_runtime_c|no_cuda_runtime_python|cli_refuses_shapes_over_memory|test_unload)$' &&
      ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 ctest --output-on-failure -R '^test_unload$')
}

tsan_concurrency() {
  sanitized_build tsan "-fsanitize=thread -fno-omit-frame-pointer" test_concurrency \
    -DCMAKE_DISABLE_FIND_PACKAGE_OpenMP=ON &&
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
      "$root/tsan/tests/test_concurrency" --threads 8 --rounds 2
}

has_libfuzzer() {
  local probe status
  command -v clang >/dev/null 2>&1 || return 1
  probe=$(mktemp -d)
  echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; return (int)(n * 0); }' >"$probe/p.c"
  clang -fsanitize=fuzzer "$probe/p.c" -o "$probe/p" >/dev/null 2>&1
  status=$?
  rm -rf "$probe"
  return $status
}

fuzz_validator() {
  local corpus status
  mkdir -p "$root/fuzz"
  clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Isrc -Iinclude \
    tests/fuzz/fuzz_validate.c src/validate.c src/error.c -o "$root/fuzz/fuzz_validate" >"$root/fuzz.log" 2>&1 ||
    { tail -n 30 "$root/fuzz.log"; return 1; }
  # A fresh corpus each run: the same seed gives the same inputs.
  corpus=$(mktemp -d)
  "$root/fuzz/fuzz_validate" -seed=1 -runs="${FUZZ_RUNS:-2000000}" "$corpus" >>"$root/fuzz.log" 2>&1
  status=$?
  rm -rf "$corpus"
  [ $status -eq 0 ] || tail -n 40 "$root/fuzz.log"
  return $status
}

for step in "${steps[@]}"; do
  case $step in
    asan) step asan "library, CLI and tests under AddressSanitizer + UBSan" asan_suite ;;
    tsan) step tsan "test_concurrency under ThreadSanitizer" tsan_concurrency ;;
    fuzz)
      if has_libfuzzer; then
        step fuzz "${FUZZ_RUNS:-2000000} runs of the validator under libFuzzer, seed 1" fuzz_validator
      else
        report fuzz "SKIPPED: no clang with libFuzzer (-fsanitize=fuzzer) here"
      fi
      ;;
    *) echo "sanitize: unknown step $step (asan, tsan, fuzz)" >&2; exit 2 ;;
  esac
done
exit "$failed"
