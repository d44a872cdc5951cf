#!/usr/bin/env bash
# Installs what tilegemm needs to build and test, skipping what is already there:
# Debian packages (compilers, CMake, reference BLAS, OpenBLAS for the CPU comparison,
# pkg-config) and Python packages (NumPy, pytest, matplotlib).  It leaves the machine's choice
# of libblas.so.3 as it found it.  nvcc is optional: without it
# the build makes the CPU library alone.
set -euo pipefail

packages=(cmake gcc g++ gfortran make pkg-config libblas-dev libopenblas-dev python3)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# Installing OpenBLAS registers it as the libblas.so.3 / liblapack.so.3 alternative, and in
# auto mode it wins: every program on the machine would switch BLAS.  The set-up must not do
# that, so the alternatives are put back to what they were (the reference BLAS where there was
# none before).
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
alternatives=("libblas.so.3-$multiarch" "liblapack.so.3-$multiarch")
alternative_now() { update-alternatives --query "$1" 2>/dev/null | sed -n 's/^Value: //p'; }
declare -A before=()
for a in "${alternatives[@]}"; do before[$a]=$(alternative_now "$a"); done

if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  for a in "${alternatives[@]}"; do
    want=${before[$a]}
    # None before: the reference library, where the install put one.
    [ -n "$want" ] || want=$(update-alternatives --list "$a" 2>/dev/null | grep -v openblas | head -n 1)
    if [ -n "$want" ] && [ "$(alternative_now "$a")" != "$want" ]; then
      echo "deps: keeping $a on $want (the install switched it)"
      $sudo update-alternatives --set "$a" "$want" >/dev/null
    fi
  done
fi

python=${PYTHON:-python3}
need=()
for m in numpy pytest matplotlib; do
  "$python" -c "import $m" >/dev/null 2>&1 || need+=("$m")
done
# These are optional: a test whose module is missing reports as skipped, so a failed install
# (no network, a managed interpreter) is a warning, never the end of the set-up.
if ((${#need[@]})); then
  echo "deps: pip installing ${need[*]}"
  if ! "$python" -m pip install -q "${need[@]}"; then
    # A system Python that refuses pip installs (PEP 668) gets Debian's packages instead.
    echo "deps: pip refused; installing python3-${need[*]// / python3-} with apt-get"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]/#/python3-}" >/dev/null ||
      echo "deps: could not install ${need[*]}: the tests that need them will be skipped"
  fi
fi

if command -v nvcc >/dev/null 2>&1; then
  echo "deps: nvcc found ($(nvcc --version | tail -n 1)): the CUDA backend will be built"
else
  echo "deps: nvcc not found: the CPU library will be built alone"
fi
