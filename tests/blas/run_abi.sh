#!/usr/bin/env bash
# Runs the abi_check programs against the reference BLAS and against tilegemm, and fails on any
# difference in their transcripts: stdout, stderr and exit status of every run.
#
#   run_abi.sh link|preload|static BINDIR LIBTILEGEMM REFERENCE_BLAS_DIR
#
#   link     abi_*_ref against abi_*_tilegemm (tilegemm.so first on the link line)
#   preload  abi_*_ref alone against abi_*_ref with LD_PRELOAD=LIBTILEGEMM
#   static   abi_*_ref against abi_*_tilegemm_static (libtilegemm.a first on the link line)
#
# REFERENCE_BLAS_DIR goes first in LD_LIBRARY_PATH, so that libblas.so.3 is the reference even
# where the system's alternative points at OpenBLAS.  Every run also checks (TG_EXPECT) that
# sgemm_ and cblas_sgemm really came from the library it was meant to test.
#
# One known difference is accepted and reported: for a row-major cblas_sgemm with an illegal
# TransB, reference CBLAS up to LAPACK 3.11 (Debian 12) says parameter 2, later ones and
# tilegemm say 3, TransB's position.
set -u
mode=$1 bindir=$2 libtilegemm=$3 refdir=$4
export LD_LIBRARY_PATH="$refdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Small problems stay on the CPU unless the environment says otherwise; nothing else is set.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 runs=0

# run_pair NAME ARGS...: runs the reference and the tilegemm program with ARGS.
run_pair() {
    local v=$1
    shift
    local ref="$bindir/abi_${v}_ref" tg
    case $mode in
        link) tg="$bindir/abi_${v}_tilegemm" ;;
        static) tg="$bindir/abi_${v}_tilegemm_static" ;;
        preload) tg="$ref" ;;
    esac
    [ -x "$tg" ] || return 0
    TG_EXPECT=reference "$ref" "$@" >"$tmp/ref" 2>&1
    echo "exit status $?" >>"$tmp/ref"
    if [ "$mode" = preload ]; then
        LD_PRELOAD="$libtilegemm" TG_EXPECT=tilegemm "$tg" "$@" >"$tmp/tg" 2>&1
    else
        TG_EXPECT=tilegemm "$tg" "$@" >"$tmp/tg" 2>&1
    fi
    echo "exit status $?" >>"$tmp/tg"
    runs=$((runs + 1))
    if grep -q "known: LAPACK <= 3.11 says 2" "$tmp/ref"; then
        if grep -q -E "Parameter 2 to routine cblas_sgemm|cblas_xerbla info=2 " "$tmp/ref"; then
            echo "note: $v $*: the reference reports row-major TransB as parameter 2 (LAPACK <= 3.11); tilegemm says 3"
            sed -i -e 's/Parameter 2 to routine cblas_sgemm/Parameter 3 to routine cblas_sgemm/' \
                -e 's/cblas_xerbla info=2 /cblas_xerbla info=3 /' "$tmp/ref"
        fi
    fi
    if ! cmp -s "$tmp/ref" "$tmp/tg"; then
        failures=$((failures + 1))
        echo "DIFFERENT: variant $v, $mode, args: $*"
        echo "  reproduce: LD_LIBRARY_PATH=$refdir ${mode/preload/LD_PRELOAD=$libtilegemm} $tg $*"
        diff "$tmp/ref" "$tmp/tg" | sed 's/^/    /' | head -40
    fi
}

skipped=""
for v in x c d; do
    # CMake builds only the variants the reference can link (see CMakeLists.txt).
    if [ ! -x "$bindir/abi_${v}_ref" ]; then
        skipped="$skipped $v"
        continue
    fi
    if [ "$v" = x ]; then
        run_pair "$v" results
        sed -n '$p' "$tmp/tg" | grep -q "exit status 0" ||
            { echo "results run failed:"; cat "$tmp/tg"; failures=$((failures + 1)); }
    fi
    n=0
    while :; do
        out=$("$bindir/abi_${v}_ref" case "$n" 2>/dev/null)
        [ "$out" = "no such case" ] && break
        run_pair "$v" case "$n"
        n=$((n + 1))
    done
done
if [ "$mode" != static ] && [ -x "$bindir/abi_f_ref" ]; then
    v=f
    ref="$bindir/abi_f_ref"
    tg="$bindir/abi_f_tilegemm"
    [ "$mode" = preload ] && tg=$ref
    "$ref" >"$tmp/ref" 2>&1; echo "exit status $?" >>"$tmp/ref"
    if [ "$mode" = preload ]; then LD_PRELOAD="$libtilegemm" "$tg" >"$tmp/tg" 2>&1; else "$tg" >"$tmp/tg" 2>&1; fi
    echo "exit status $?" >>"$tmp/tg"
    runs=$((runs + 1))
    # The Fortran program cannot check its provider itself: ldd says whether tilegemm is in.
    if [ "$mode" = link ] && ! ldd "$tg" | grep -q tilegemm; then
        echo "abi_f_tilegemm is not linked with tilegemm"; failures=$((failures + 1))
    fi
    if ! cmp -s "$tmp/ref" "$tmp/tg"; then
        failures=$((failures + 1))
        echo "DIFFERENT: Fortran program, $mode"; diff "$tmp/ref" "$tmp/tg" | sed 's/^/    /'
    fi
fi

echo "$mode: $runs runs compared, $failures different"
[ -z "$skipped" ] || echo "note: variants$skipped not built: this reference BLAS lacks reference CBLAS's globals"
[ "$failures" -eq 0 ] || exit 1
# Nothing compared at all is a skip, not a pass.
[ "$runs" -gt 0 ] || { echo "SKIP: no ABI program could be built against this BLAS"; exit 77; }
