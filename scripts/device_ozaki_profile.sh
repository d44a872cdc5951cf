#!/usr/bin/env bash
# Where rung 11's time goes: ncu's time of each of its kernels in one call of
# `tilegemm bench N --algo ozaki2_int8` (N^3, column-major, uniform data) at each size, and the
# per-kernel table (bench/ozaki_kernels.py).  Results under ${OUT:-device-out}: ncu-N.csv,
# kernels-N.txt and logs/.  No clock control (METHOD.md): the card's own clock.
#
#   scripts/device_ozaki_profile.sh [SIZE ...]        (default: 4096 16384)
#   DEADLINE  seconds after the start at which the run is cut (default 400)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. scripts/device_common.sh
device_setup 400 24
device_build
kernels='regex:scan_lines|survey_lines|to_leading|to_block_floors|s8gemm|bound_needs|weigh_bound|choose_plan|to_residues|reconstruct|fma_left'
sizes=("$@")
((${#sizes[@]})) || sizes=(4096 16384)
for size in "${sizes[@]}"; do
  # the bench makes more than one call: bench/ozaki_kernels.py takes the first
  timeout "$(($(left) > 1 ? $(left) : 1))" ncu --clock-control none --metrics gpu__time_duration.sum \
    --csv -k "$kernels" "$cli" bench "$size" --layout col --algo ozaki2_int8 --repeats 1 \
    --warmup 0 >"$top/ncu-$size.csv" 2>"$out/ncu-$size.err"
  status "ncu $size^3" "rc $?"
  python3 bench/ozaki_kernels.py "$top/ncu-$size.csv" | tee "$top/kernels-$size.txt"
done
