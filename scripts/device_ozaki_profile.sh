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
for n in "${@:-4096 16384}"; do
  for size in $n; do
    # one call's launches (k11_ozaki2.cu): 8 + 13 x panels, panels of columns whose residues
    # (16 bytes an output) fit 1 GiB, whole 256-column blocks
    panels=$(python3 -c "m=$size; print(max(1, -(-m // max(256, (1 << 30) // (16 * m) // 256 * 256))))")
    per_call=$((8 + 13 * panels))
    timeout "$(( $(left) > 1 ? $(left) : 1 ))" ncu --clock-control none --metrics gpu__time_duration.sum --csv \
      -k "$kernels" -c "$per_call" "$cli" bench "$size" --layout col --algo ozaki2_int8 --repeats 1 \
      --warmup 0 >"$top/ncu-$size.csv" 2>"$out/ncu-$size.err"
    status "ncu $size^3" "rc $? ($per_call launches, $panels panels)"
    python3 bench/ozaki_kernels.py "$top/ncu-$size.csv" "$per_call" | tee "$top/kernels-$size.txt"
  done
done
