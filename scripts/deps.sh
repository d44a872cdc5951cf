#!/usr/bin/env bash
# Checks what tilegemm's build and tests use, by what works here (commands, a test compile and
# link, Python imports), not by which Debian packages are installed, and installs only what
# is missing.
#
#   required  a C11 compiler, a C++ compiler, CMake >= 3.18, make or ninja.  Missing and not
#             installable: the set-up stops and says exactly what to install.
#   optional  gfortran, the reference BLAS with CBLAS, OpenBLAS, pkg-config, Python 3 with
#             NumPy, pytest and matplotlib.  An install that fails (no network, no root, no
#             apt-get) is a one-line warning naming the tests that will report skipped.
#   nvcc      optional as well: without it the CPU library is built alone.
#
# Nothing is installed when nothing is missing.  Installs go through apt-get (Debian/Ubuntu,
# as root or with password-less sudo) and pip, each with a short timeout, so an offline
# machine loses seconds, not minutes.  The machine's choice of libblas.so.3 is kept.
# Environment: CC, CXX, FC (compilers to check), PYTHON (default python3),
# TG_DEPS_INSTALL=0 (check only, install nothing).
set -uo pipefail

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
have() { command -v "$1" >/dev/null 2>&1; }
say() { echo "deps: $*"; }
warn() { echo "deps: warning: $*" >&2; }
version_at_least() { [ "$(printf '%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]; }
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)

# --- What works here -------------------------------------------------------------------------
c_compiler() { # the first that compiles C11
  local cc
  for cc in ${CC:-} cc gcc clang; do
    have "$cc" && printf '_Static_assert(__STDC_VERSION__ >= 201112L, "C11");\nint main(void) { return 0; }\n' |
      "$cc" -std=c11 -x c - -o "$tmp/c11" >/dev/null 2>&1 && { echo "$cc"; return 0; }
  done
  return 1
}
cxx_compiler() {
  local cxx
  for cxx in ${CXX:-} c++ g++ clang++; do
    have "$cxx" && printf 'int main() { return 0; }\n' |
      "$cxx" -x c++ - -o "$tmp/cxx" >/dev/null 2>&1 && { echo "$cxx"; return 0; }
  done
  return 1
}
cmake_version() { have cmake && cmake --version 2>/dev/null | sed -n '1s/[^0-9]*\([0-9][0-9.]*\).*/\1/p'; }
cmake_ok() { local v; v=$(cmake_version) && [ -n "$v" ] && version_at_least "$v" 3.18; }
build_tool_ok() { have make || have ninja || have ninja-build; }
fortran_ok() { have "${FC:-gfortran}" || have gfortran || have f95; }
# The BLAS ABI tests' own check (tests/blas/CMakeLists.txt): sgemm_, cblas_sgemm and the
# reference CBLAS's globals, linked from the library CMake would pick.
reference_blas_ok() {
  local cc=$1 lib="" dir
  [ -n "$cc" ] || return 1
  for dir in "/usr/lib/$multiarch/blas" /usr/lib64/blas /usr/lib/blas; do
    [ -e "$dir/libblas.so" ] && { lib=$dir/libblas.so; break; }
  done
  [ -n "$lib" ] || lib=$(ldconfig -p 2>/dev/null | awk '$1 == "libblas.so" {print $NF; exit}')
  [ -n "$lib" ] || return 1
  printf 'extern int RowMajorStrg, CBLAS_CallFromC;\nvoid cblas_sgemm(void);\nvoid sgemm_(void);\nint main(void) { cblas_sgemm(); sgemm_(); return RowMajorStrg + CBLAS_CallFromC; }\n' |
    "$cc" -x c - -x none "$lib" -o "$tmp/blas" >/dev/null 2>&1
}
# bench/CMakeLists.txt's search for cpu_vs_openblas.
openblas_ok() {
  local lib="" inc=""
  for f in "/usr/lib/$multiarch/openblas-pthread/libopenblas.so" "/usr/lib/$multiarch/libopenblas.so" \
           /usr/lib64/libopenblas.so; do [ -e "$f" ] && lib=$f; done
  for f in "/usr/include/$multiarch/openblas-pthread/cblas.h" /usr/include/openblas/cblas.h; do
    [ -e "$f" ] && inc=$f
  done
  [ -n "$lib" ] && [ -n "$inc" ]
}
python=${PYTHON:-python3}
python_module_ok() { have "$python" && "$python" -c "import $1" >/dev/null 2>&1; }

# --- Installing ------------------------------------------------------------------------------
install_allowed() { [ "${TG_DEPS_INSTALL:-1}" != 0 ]; }
sudo=""
apt_state=unknown # unknown, ready (lists updated), failed
apt_ready() {
  [ "$apt_state" = unknown ] || { [ "$apt_state" = ready ]; return; }
  apt_state=failed
  install_allowed && have apt-get || return 1
  if [ "$(id -u)" -ne 0 ]; then
    have sudo && sudo -n true 2>/dev/null || return 1
    sudo="sudo -n"
  fi
  # Short timeouts: an offline machine answers within seconds instead of retrying.
  timeout 30 $sudo apt-get update -qq -o Acquire::Retries=0 -o Acquire::http::Timeout=10 \
    -o Acquire::https::Timeout=10 >"$tmp/apt.log" 2>&1 || return 1
  apt_state=ready
}
# Installing OpenBLAS registers it as the libblas.so.3 / liblapack.so.3 alternative, and in
# auto mode it wins: every program on the machine would switch BLAS.  The set-up must not do
# that, so the alternatives are put back to what they were (the reference BLAS where there was
# none before).
alternatives=("libblas.so.3-$multiarch" "liblapack.so.3-$multiarch")
alternative_now() { update-alternatives --query "$1" 2>/dev/null | sed -n 's/^Value: //p'; }
apt_install() { # packages...; 0 when all were installed
  apt_ready || return 1
  declare -A before=()
  local a want status
  for a in "${alternatives[@]}"; do before[$a]=$(alternative_now "$a"); done
  say "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive timeout 600 $sudo apt-get install -y -qq \
    -o Acquire::Retries=0 -o Acquire::http::Timeout=10 "$@" >"$tmp/apt.log" 2>&1
  status=$?
  for a in "${alternatives[@]}"; do
    want=${before[$a]}
    # None before: the reference library, where the install put one.
    [ -n "$want" ] || want=$(update-alternatives --list "$a" 2>/dev/null | grep -v openblas | head -n 1)
    if [ -n "$want" ] && [ "$(alternative_now "$a")" != "$want" ]; then
      say "keeping $a on $want (the install switched it)"
      $sudo update-alternatives --set "$a" "$want" >/dev/null
    fi
  done
  return $status
}
why_not_installed() {
  if ! install_allowed; then echo "TG_DEPS_INSTALL=0"
  elif ! have apt-get; then echo "no apt-get here"
  elif [ "$(id -u)" -ne 0 ] && ! { have sudo && sudo -n true 2>/dev/null; }; then echo "not root, no password-less sudo"
  elif [ "$apt_state" = failed ]; then echo "apt-get failed: $(grep -m 1 -E '^(E|W|Err):' "$tmp/apt.log" 2>/dev/null || tail -n 1 "$tmp/apt.log" 2>/dev/null)"
  else echo "apt-get install failed: $(grep -m 1 -E '^E:' "$tmp/apt.log" 2>/dev/null || tail -n 1 "$tmp/apt.log" 2>/dev/null)"
  fi
}

# --- Required: the build cannot work without these --------------------------------------------
needed=()
cc=$(c_compiler) || needed+=(gcc)
cxx=$(cxx_compiler) || needed+=(g++)
cmake_ok || needed+=(cmake)
build_tool_ok || needed+=(make)
if ((${#needed[@]})); then
  apt_install "${needed[@]}" || true
  cc=$(c_compiler) || cc=""
  cxx=$(cxx_compiler) || cxx=""
  missing=()
  [ -n "$cc" ] || missing+=("a C11 compiler (gcc or clang; Debian: gcc)")
  [ -n "$cxx" ] || missing+=("a C++ compiler (g++ or clang++; Debian: g++)")
  if ! cmake_ok; then
    found=$(cmake_version)
    missing+=("CMake 3.18 or newer${found:+ (found $found)} (Debian: cmake; or pip install cmake)")
  fi
  build_tool_ok || missing+=("make or ninja (Debian: make)")
  if ((${#missing[@]})); then
    echo "deps: cannot build tilegemm: missing" >&2
    for m in "${missing[@]}"; do echo "deps:   - $m" >&2; done
    echo "deps: install those ($(why_not_installed)) and run this again" >&2
    exit 1
  fi
fi

# --- Optional: each missing piece only makes some tests report skipped -------------------------
declare -A skips=(
  [gfortran]="the blas_abi_* tests run without their Fortran programs"
  [libblas-dev]="the blas_abi_* tests (reference BLAS with CBLAS) will report skipped"
  [libopenblas-dev]="bench/cpu_vs_openblas (scripts/run.sh's CPU comparison) will not be built"
  [pkg-config]="blas_install_consumer will report skipped after its CMake half"
  [python3]="the python_* tests will report skipped"
)
optional=()
fortran_ok || optional+=(gfortran)
reference_blas_ok "$cc" || optional+=(libblas-dev)
openblas_ok || optional+=(libopenblas-dev)
have pkg-config || optional+=(pkg-config)
have "$python" || optional+=(python3)
if ((${#optional[@]})); then
  if ! apt_install "${optional[@]}"; then
    why=$(why_not_installed)
    for p in "${optional[@]}"; do warn "could not install $p ($why): ${skips[$p]}"; done
  fi
fi

pip_failure() {
  install_allowed || { echo "TG_DEPS_INSTALL=0"; return; }
  grep -m 1 -E 'ERROR|[Ee]rror:' "$tmp/pip.log" 2>/dev/null || tail -n 1 "$tmp/pip.log" 2>/dev/null
}
# Python modules: pip first (a PEP 668 system Python refuses it), then Debian's packages.
declare -A module_skips=(
  [numpy]="the python_* tests will report skipped"
  [pytest]="the python_* tests will report skipped"
  [matplotlib]="bench/plot.py cannot draw (no test uses it)"
)
modules=()
if have "$python"; then
  for m in numpy pytest matplotlib; do python_module_ok "$m" || modules+=("$m"); done
fi
if ((${#modules[@]})) && install_allowed; then
  say "pip install ${modules[*]}"
  PIP_DISABLE_PIP_VERSION_CHECK=1 timeout 60 "$python" -m pip install -q --retries 0 \
    --timeout 15 "${modules[@]}" >"$tmp/pip.log" 2>&1 ||
    { [ "$(command -v "$python")" = /usr/bin/python3 ] && apt_install "${modules[@]/#/python3-}"; } || true
fi
for m in ${modules[@]+"${modules[@]}"}; do
  python_module_ok "$m" || warn "could not install the Python module $m for $python ($(pip_failure)): ${module_skips[$m]}"
done

v=$(cmake_version)
say "build: $cc, $cxx, cmake $v, $(have make && echo make || echo ninja)"
if have nvcc; then
  say "nvcc $(nvcc --version | sed -n "s/.*release \([0-9.]*\).*/\1/p") found: the CUDA backend will be built"
elif [ -x /usr/local/cuda/bin/nvcc ]; then
  say "nvcc is not on PATH, but /usr/local/cuda/bin/nvcc exists: the build uses it"
else
  say "nvcc not found: the CPU library will be built alone"
fi
exit 0
