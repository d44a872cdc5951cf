#!/usr/bin/env bash
# Rung 7 (short k) on the GPU, in one call: build the CLI and the GPU rung tests for the H100,
# run the GPU tests and `tilegemm verify --quick` of the rungs named, time them beside cuBLAS on
# short-k shapes with large outputs (all with --repeats 10), then compute-sanitizer racecheck
# and synccheck of shortk128 on shapes of one chunk of k and of several, while time is left.  JSON under
# ${OUT:-device-out}; a short table last: each rung's time, the rate it writes C at
# (m * n * 4 bytes / time; the copy rate is 2.99 TB/s on the H100) and its ratio to cuBLAS.
#
#   scripts/device_shortk.sh        environment: RUNGS (default: shortk128 and ffma128x128,
#                                   what auto ran for k of 65 to 256 before; space-separated),
#                                   DEADLINE (seconds, default 570), SANITIZE (default 1; 0
#                                   skips the sanitizer step)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device_common.sh
device_setup 570 44
rungs=${RUNGS:-shortk128 ffma128x128}
algos=$(echo $rungs | tr ' ' ',')
device_build test_gpu_rungs
"$cli" algos 2>&1 | grep -E "^(name|shortk)" >"$out/algos.txt"
status "rungs in the build" "$(awk 'NR > 1 {printf "%s%s", sep, $1; sep = ","}' "$out/algos.txt")"

rung_tests "$rungs"

# name | shapes | options: row-major NN unless the options say otherwise.
cases=(
  "nn|27182x26882x25 16384x16384x16 8192x8192x64 7573x2201x8 4253x11166x11 2048x2048x32 31687x15626x91 8192x8192x128 8192x8192x256|"
  "nt-col|4191x1468x9 6537x10399x69|--trans NT --layout col"
  "tn|8192x8192x32 12007x9001x40 4785x9530x78|--trans TN"
  "tt-col|12007x9001x40 8192x8192x32 1957x18192x142|--trans TT --layout col"
)
for c in "${cases[@]}"; do
  IFS='|' read -r name shapes opts <<<"$c"
  if [ "$(left)" -lt 40 ]; then
    status "bench $name" "not run: too little time left"
    continue
  fi
  # shellcheck disable=SC2086
  timeout "$(left)" "$cli" bench $shapes $opts --algo "$algos" --repeats 10 \
    --json "$top/shortk-$name.json" >"$out/bench-$name.log" 2>&1
  status "bench $name" "rc $? at $SECONDS s"
done

if [ "${SANITIZE:-1}" = 1 ] && command -v compute-sanitizer >/dev/null 2>&1; then
  # k 20: one chunk of 32; k 200: three chunks of 64 and a ragged fourth, its barriers between
  for tool in racecheck synccheck; do
    clean=1
    for case in "--layout row --trans NN --shape 300x260x20 --misalign" \
                "--layout col --trans TT --shape 300x260x200 --batch 2 --beta 0.5" \
                "--layout row --trans NT --shape 260x300x130"; do
      if [ "$(left)" -lt 30 ]; then clean=2; break; fi
      # shellcheck disable=SC2086
      timeout "$(left)" compute-sanitizer --tool "$tool" --error-exitcode 3 \
        "$cli" verify --algo shortk128 $case >>"$out/sanitizer.log" 2>&1 || clean=0
    done
    case $clean in
    1) status "$tool shortk128" clean ;;
    2) status "$tool shortk128" "cut: too little time" ;;
    *) status "$tool shortk128" "ERRORS (sanitizer.log)" ;;
    esac
  done
fi

{
  echo "== summary"
  cat "$summary"
  echo "== C written per second (m * n * 4 bytes / median time), ratio to cuBLAS SGEMM"
  python3 - "$top" $rungs <<'PY'
import glob, json, sys
top, rungs = sys.argv[1], sys.argv[2:]
print(f"{'algo':14} {'shape':26} {'ms':>9} {'C TB/s':>7} {'x cuBLAS':>8}")
for path in sorted(glob.glob(f"{top}/shortk-*.json")):
    try:
        results = json.load(open(path))["results"]
    except (OSError, ValueError, KeyError):
        print(f"{path}: unreadable")
        continue
    for r in results:
        if r.get("algo") not in rungs + ["cublas"]:
            continue
        shape = f'{r["m"]}x{r["n"]}x{r["k"]} {r.get("trans", "NN")} {r.get("layout", "row")}'
        ms = r.get("median_ms")
        if r.get("status") != "OK" or not isinstance(ms, (int, float)) or ms <= 0:
            print(f'{r["algo"]:14} {shape:26} {r.get("status", "?")}')
            continue
        rate = r["m"] * r["n"] * 4 / (ms * 1e-3) / 1e12
        ratio = r.get("ratio")
        ratio = f"{ratio:.2f}" if isinstance(ratio, (int, float)) else "-"
        print(f'{r["algo"]:14} {shape:26} {ms:9.4f} {rate:7.2f} {ratio:>8}')
PY
} | tee "$top/table.txt"
tar -C "$out" -czf "$top/0-logs.tgz" . && rm -rf "$out"
