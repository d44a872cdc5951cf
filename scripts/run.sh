#!/usr/bin/env bash
# The main job, on whatever hardware is present.  Sets up what is missing (scripts/deps.sh),
# builds the tool (for the GPU found here, when there is one), then:
#   1. tilegemm info     what was found and what the library was built for
#   2. tilegemm verify   on a GPU: every GPU rung against the float64 reference, the quick sweep;
#                        without one: the CPU backend, the full sweep
#   3. a benchmark       on a GPU: `auto` against cuBLAS on a few shapes, with the ratio;
#                        without one: the CPU backend, and OpenBLAS beside it where installed
# Each step says what it runs, and how long it took once done.  Environment: BUILD_DIR, JOBS,
# TG_CUDA_ARCH (see scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
cli=$build/tilegemm
start=$SECONDS
step_start=$SECONDS
step() {
  echo
  echo "== run: $* (at $((SECONDS - start)) s)"
  step_start=$SECONDS
}
done_step() { echo "== run: $1 took $((SECONDS - step_start)) s"; }

step "set-up and build (scripts/build.sh main_job, ${JOBS:-$(nproc)} jobs; the first build takes a minute or more)"
scripts/build.sh main_job
done_step "set-up and build"

step "1/3 tilegemm info"
"$cli" info # exits 1, saying how to rebuild, where this build has no code for the GPU
gpu=0
"$cli" info | grep -q '^GPU 0:' && gpu=1

if ((gpu)); then
  step "2/3 tilegemm verify --quick --gpu-only: every GPU rung against float64 (about half a minute)"
  "$cli" verify --quick --gpu-only
  done_step "verify"
  step "3/3 tilegemm bench --algo auto: auto against cuBLAS on 5 shapes (about half a minute)"
  "$cli" bench --algo auto 1024 4096 8192 4097 127x8191x1023
  done_step "bench"
else
  step "2/3 tilegemm verify: the CPU backend against float64 (no GPU here)"
  "$cli" verify
  done_step "verify"
  step "3/3 tilegemm bench --suite quick: the CPU backend (no GPU here)"
  "$cli" bench --suite quick
  done_step "bench"
  if [ -x "$build/bench/cpu_vs_openblas" ]; then
    step "3/3 bench/cpu_vs_openblas 512 1024 2048: the CPU backend beside OpenBLAS"
    "$build/bench/cpu_vs_openblas" 512 1024 2048
    done_step "cpu_vs_openblas"
  fi
fi
echo
echo "run: done in $((SECONDS - start)) s"
