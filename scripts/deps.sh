#!/usr/bin/env bash
# Installs what tilegemm needs to build and test, skipping what is already there:
# Debian packages (compilers, CMake, reference BLAS, OpenBLAS for the CPU comparison,
# pkg-config) and Python packages (NumPy, pytest, matplotlib).  nvcc is optional: without it
# the build makes the CPU library alone.
set -euo pipefail

packages=(cmake gcc g++ gfortran make pkg-config libblas-dev libopenblas-dev python3)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

python=${PYTHON:-python3}
need=()
for m in numpy pytest matplotlib; do
  "$python" -c "import $m" >/dev/null 2>&1 || need+=("$m")
done
if ((${#need[@]})); then
  echo "deps: pip installing ${need[*]}"
  if ! "$python" -m pip install -q "${need[@]}"; then
    # A system Python that refuses pip installs (PEP 668) gets Debian's packages instead.
    echo "deps: pip refused; installing python3-${need[*]// / python3-} with apt-get"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]/#/python3-}" >/dev/null
  fi
fi

if command -v nvcc >/dev/null 2>&1; then
  echo "deps: nvcc found ($(nvcc --version | tail -n 1)): the CUDA backend will be built"
else
  echo "deps: nvcc not found: the CPU library will be built alone"
fi
