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

# What the build will take, said before it starts (docs/building.md, "Build times").  Nearly
# all of a cold build is nvcc compiling the kernels for each GPU architecture: about 240 s of
# CPU time an architecture, 15 s for the C code, and the portable list costs 3 to 3.5 times
# one architecture (3.5 taken here).  Measured: the portable list in 8m19s on the 2-core
# machine without a GPU, at f2b15c9 (5m43s to 6m24s before rung 7 took k up to 256 in three
# instantiations a layout); on 16 cores 56 s, sm_90a alone 29 s (before it).
cuda_arch_count() { # GPU code the build will make, in half architectures (0: no CUDA backend)
  local cache=$build/CMakeCache.txt arch=${TG_CUDA_ARCH-} n=0 a
  if [ -f "$cache" ]; then
    grep -q '^TG_WITH_CUDA:BOOL=OFF' "$cache" && { echo 0; return; }
    grep -Eq '^CMAKE_CUDA_COMPILER:(FILE)?PATH=.*nvcc' "$cache" || { echo 0; return; }
    [ -n "${TG_CUDA_ARCH+set}" ] || arch=$(sed -n 's/^TG_CUDA_ARCH:STRING=//p' "$cache")
  elif ! command -v nvcc >/dev/null && [ -z "${CUDACXX:-}" ] && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo 0
    return
  fi
  case "$arch" in
    all) echo 7 ;;
    "" | native)
      if nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then echo 2; else echo 7; fi ;;
    *)
      for a in ${arch//;/ }; do [[ $a == *-virtual ]] || n=$((n + 2)); done
      echo "$n" ;;
  esac
}
duration() { if (($1 < 60)); then echo "$1 s"; else printf '%dm%02ds\n' $(($1 / 60)) $(($1 % 60)); fi; }
build_estimate() {
  local archs cores jobs seconds low high what
  archs=$(cuda_arch_count)
  cores=$(nproc)
  jobs=${JOBS:-$cores}
  ((jobs < cores)) && cores=$jobs
  seconds=$((20 + (15 + 120 * archs) / cores)) # 20 s: set-up check and configure
  low=$(duration $((seconds * 8 / 10)))
  high=$(duration $((seconds * 13 / 10)))
  if ((archs == 0)); then
    what="the CPU library alone (no nvcc, or TG_WITH_CUDA=OFF)"
  elif ((archs == 7)); then
    what="CUDA code for the portable list, sm_75 sm_80 sm_90a and PTX (a library built here runs on any GPU)"
  else
    what="CUDA code for $((archs / 2)) GPU architecture(s)"
  fi
  if [ -x "$cli" ]; then
    echo "run: $build is built already: seconds, unless sources changed (a cold build of $what takes $low to $high on $cores cores)"
  else
    echo "run: a cold build of $what: expect $low to $high on $cores cores (longer while other work shares them)"
    if ((archs > 2)); then
      echo "run: to build less here: TG_CUDA_ARCH=90a scripts/run.sh (Hopper alone), or a CPU-only build (docs/building.md)"
    fi
  fi
}

step "set-up and build (scripts/build.sh main_job, ${JOBS:-$(nproc)} jobs)"
build_estimate
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
