#!/usr/bin/env bash
# Installs the build tree into a temporary prefix and builds a small consumer project against
# it both ways a user would: CMake's find_package(tilegemm) (shared and static targets) and
# pkg-config (shared, and static with --static).  Each consumer program must run and print the
# right product.
#
#   install_consumer.sh BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR C_COMPILER CMAKE
#
# The install prefix differs from the one the build was configured with, so this also checks
# that the installed CMake package and .pc file are relocatable.  Exits 77 (skipped) only for
# the pkg-config half when pkg-config is not installed, after the CMake half has passed.
set -eu
build=$1 consumer=$2 work=$3 cc=$4 cmake=${5:-cmake}
prefix="$work/prefix"
rm -rf "$work"
mkdir -p "$work"

step() { echo "== $*"; }
fail() { echo "FAIL: $*"; exit 1; }

step "cmake --install $build --prefix $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; fail "cmake --install"; }

libdir=$(dirname "$(find "$prefix" -name 'libtilegemm.so' -print -quit)")
[ -n "$libdir" ] && [ "$libdir" != . ] || fail "no libtilegemm.so installed"
for f in include/tilegemm.h include/tilegemm_cblas.h bin/tilegemm; do
    [ -e "$prefix/$f" ] || fail "$f not installed"
done
for f in libtilegemm.a cmake/tilegemm/tilegemmConfig.cmake cmake/tilegemm/tilegemmConfigVersion.cmake \
         cmake/tilegemm/tilegemmTargets.cmake pkgconfig/tilegemm.pc; do
    [ -e "$libdir/$f" ] || fail "$libdir/$f not installed"
done
echo "installed: $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')"
"$prefix/bin/tilegemm" --help >/dev/null 2>&1 || "$prefix/bin/tilegemm" info >/dev/null 2>&1 ||
    echo "note: the installed CLI did not answer --help or info (not a failure here)"

export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

step "find_package(tilegemm) with CMAKE_PREFIX_PATH=$prefix"
"$cmake" -S "$consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release >"$work/cmake-build.log" 2>&1 ||
    { cat "$work/cmake-build.log"; fail "configuring the consumer"; }
"$cmake" --build "$work/cmake-build" >>"$work/cmake-build.log" 2>&1 ||
    { cat "$work/cmake-build.log"; fail "building the consumer"; }
for exe in consumer_shared consumer_static; do
    "$work/cmake-build/$exe" || fail "$exe"
done
ldd "$work/cmake-build/consumer_shared" | grep -q "$libdir/libtilegemm.so" ||
    fail "consumer_shared does not load the installed libtilegemm.so"

step "pkg-config tilegemm"
if ! command -v pkg-config >/dev/null; then
    echo "SKIP: pkg-config is not installed (the find_package half passed)"
    exit 77
fi
export PKG_CONFIG_PATH="$libdir/pkgconfig"
pkg-config --exists --print-errors tilegemm || fail "pkg-config cannot read tilegemm.pc"
echo "version $(pkg-config --modversion tilegemm); cflags: $(pkg-config --cflags tilegemm); libs: $(pkg-config --libs tilegemm); static: $(pkg-config --static --libs tilegemm)"
# shellcheck disable=SC2046
"$cc" "$consumer/main.c" -o "$work/pc_shared" $(pkg-config --cflags --libs tilegemm) ||
    fail "building with pkg-config"
"$work/pc_shared" || fail "pc_shared"
ldd "$work/pc_shared" | grep -q "$libdir/libtilegemm.so" || fail "pc_shared does not load the installed library"
# shellcheck disable=SC2046
"$cc" "$consumer/main.c" -o "$work/pc_static" $(pkg-config --cflags tilegemm) \
    $(pkg-config --static --libs tilegemm | sed 's/-ltilegemm\b/-l:libtilegemm.a/') ||
    fail "building with pkg-config --static"
"$work/pc_static" || fail "pc_static"
! ldd "$work/pc_static" | grep -q libtilegemm || fail "pc_static is not static in tilegemm"
echo "all consumers built and ran"
