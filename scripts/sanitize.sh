#!/usr/bin/env bash
# CI's sanitizer steps, run by .ci/run after the test command (scripts/test.sh):
#
#   asan  AddressSanitizer + UBSan build of the library, the CLI and every C test (the CPU path
#         and the emulated kernels; no nvcc, so it runs anywhere), then its CTest suite.  Not
#         run there: the Python suites (an interpreter would need libasan preloaded), the
#         install test (it builds an uninstrumented consumer against the instrumented library)
#         and the LD_PRELOAD ABI test (ASan's runtime must come first in the library list).
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

for step in "${steps[@]}"; do
  case $step in
    asan)
      flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
      if cmake -S . -B "$root/asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTG_WITH_CUDA=OFF \
           -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_Fortran_FLAGS="$flags" \
           -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" \
           >"$root/asan.log" 2>&1 && cmake --build "$root/asan" -j"$jobs" >>"$root/asan.log" 2>&1; then
        # The fences of the emulated test are its own SIGSEGV handler's: ASan leaves it alone.
        if (cd "$root/asan" &&
            ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allow_user_segv_handler=1 \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            ctest --output-on-failure -j"$jobs" -E '^(python_.*|blas_install_consumer|blas_abi_preload)$'); then
          report asan "passed (library, CLI and tests under AddressSanitizer + UBSan)"
        else
          report asan FAILED; failed=1
        fi
      else
        tail -n 30 "$root/asan.log"; report asan "FAILED to build"; failed=1
      fi
      ;;
    tsan)
      flags="-fsanitize=thread -fno-omit-frame-pointer"
      if cmake -S . -B "$root/tsan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTG_WITH_CUDA=OFF \
           -DCMAKE_DISABLE_FIND_PACKAGE_OpenMP=ON -DCMAKE_C_FLAGS="$flags" \
           -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
           -DCMAKE_SHARED_LINKER_FLAGS="$flags" >"$root/tsan.log" 2>&1 &&
         cmake --build "$root/tsan" -j"$jobs" --target test_concurrency >>"$root/tsan.log" 2>&1; then
        if TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
           "$root/tsan/tests/test_concurrency" --threads 8 --rounds 2; then
          report tsan "passed (test_concurrency under ThreadSanitizer)"
        else
          report tsan FAILED; failed=1
        fi
      else
        tail -n 30 "$root/tsan.log"; report tsan "FAILED to build"; failed=1
      fi
      ;;
    fuzz)
      cc=$(command -v clang || true)
      probe=$(mktemp -d)
      echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; return (int)(n * 0); }' >"$probe/p.c"
      if [ -z "$cc" ] || ! "$cc" -fsanitize=fuzzer "$probe/p.c" -o "$probe/p" >/dev/null 2>&1; then
        report fuzz "SKIPPED: no clang with libFuzzer (-fsanitize=fuzzer) here"
        rm -rf "$probe"
        continue
      fi
      mkdir -p "$root/fuzz"
      if "$cc" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
           -Isrc -Iinclude tests/fuzz/fuzz_validate.c src/validate.c \
           -o "$root/fuzz/fuzz_validate" >"$root/fuzz.log" 2>&1; then
        # A fresh corpus each run: the same seed gives the same inputs.
        rm -rf "$probe/corpus" && mkdir -p "$probe/corpus"
        if "$root/fuzz/fuzz_validate" -seed=1 -runs="${FUZZ_RUNS:-2000000}" "$probe/corpus" \
             >>"$root/fuzz.log" 2>&1; then
          report fuzz "passed ($(grep -o 'Done [0-9]* runs' "$root/fuzz.log" | tail -n 1) of the validator under libFuzzer)"
        else
          tail -n 40 "$root/fuzz.log"; report fuzz FAILED; failed=1
        fi
      else
        tail -n 30 "$root/fuzz.log"; report fuzz "FAILED to build"; failed=1
      fi
      rm -rf "$probe"
      ;;
    *) echo "sanitize: unknown step $step (asan, tsan, fuzz)" >&2; exit 2 ;;
  esac
done
exit "$failed"
