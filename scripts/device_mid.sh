#!/usr/bin/env bash
# Tensor-core rungs for medium products on the GPU, in one call: build the CLI and the GPU tests
# for the H100; the GPU tests of the rungs named (and of autotuning, whose timing they join);
# `tilegemm verify --quick` of each; every split of them beside the incumbents and cuBLAS on
# medium shapes (fp32) and on TF32 squares; compute-sanitizer racecheck and synccheck of each;
# then, with the time left, their rows of the regret corpus (every case with min(m, n) > 64,
# scripts/device_corpus.sh with RETIME_SIDE_ABOVE) for bench/corpus.py --refresh.  JSON under
# ${OUT:-device-out}; a short table last: each case's fastest entry of each rung, and its ratio
# to cuBLAS.
#
#   RUNGS="a b" scripts/device_mid.sh    environment: RUNGS (required: the rungs to test),
#                                        DEADLINE (seconds, default 570), CORPUS (default 1;
#                                        0 skips the corpus rows), CORPUS_ALGOS (the rungs
#                                        whose rows are re-timed, default RUNGS), SET (mid, the
#                                        default, or thin: outputs with a side of 64 or less and
#                                        long k, whose corpus rows are those with k >= 256),
#                                        CORPUS_RETIME (which rows, as device_corpus.sh's
#                                        RETIME_* variable: default as SET says), CASES_FILE
#                                        (cases of its own, a line each as `cases` below),
#                                        PREBUILT (a folder of tilegemm, test_gpu_rungs (and
#                                        test_gpu_split_k) built elsewhere for sm_90a, or
#                                        .ab/bins.txz holding them under b/: nothing is built)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device_common.sh
device_setup 570 44
rungs=${RUNGS:?name the rungs to test in RUNGS, space-separated}
algos=$(echo $rungs | tr ' ' ',')
if [ -n "${PREBUILT:-}" ]; then
  bins=$PREBUILT
  if [ -f "$PREBUILT" ]; then
    bins=$top/bins && mkdir -p "$bins" && tar -xJf "$PREBUILT" -C "$bins" && bins=$bins/b
  fi
  PREBUILT_CLI=$bins/tilegemm
  device_build
  if [ -x "$bins/test_gpu_split_k" ]; then
    "$bins/test_gpu_split_k" >"$out/test_gpu_split_k.log" 2>&1
    status "test_gpu_split_k" "rc $? ($(tail -1 "$out/test_gpu_split_k.log"))"
  fi
  for r in $rungs; do
    timeout 300 "$bins/test_gpu_rungs" --algo "$r" >"$out/rungs-$r.log" 2>&1
    status "test_gpu_rungs $r" "rc $? ($(tail -1 "$out/rungs-$r.log"))"
  done
  verify_rungs "$rungs"
else
  device_build test_gpu_rungs test_gpu_autotune
  rung_tests "$rungs" test_gpu_autotune
fi
# name | shapes | options | rungs beside the new ones
if [ "${SET:-mid}" = thin ]; then
  incumbents=tma_wgmma3xtf32,tma_wgmma3xtf32_64x128,skinny128x32,skinny32x64,stream32,stream64,warptile64
  tf32_incumbents=tma_wgmmatf32_64x128,tma_wgmmatf32_128x128,mmatf32,stream64
  cases=(
    "thin-nn-row|7400x44x6371 16384x64x16384 16384x32x16384 20107x166x5502 49x15603x6343||$incumbents"
    "thin-nt-row|1989x44x10493 30853x47x14790 8518x34x1939 16808x72x11599|--trans NT|$incumbents"
    "thin-tn-row|17254x14x15556 148x2565x17099 6471x168x10437 82x4580x8903|--trans TN|$incumbents"
    "thin-tt-col|7752x106x29841 3998x59x12991 2590x100x4718|--trans TT --layout col|$incumbents"
    "tf32|7400x44x6371 16384x64x16384 1989x44x10493 82x4580x8903 1024x1024x1024|--math tf32|$tf32_incumbents"
  )
  corpus_retime=(${CORPUS_RETIME:-RETIME_K_AT_LEAST=256})
else
  incumbents=tma_wgmma3xtf32,mma3xtf32,skinny128x32,skinny32x64,skinny32x32,warptile64
  cases=(
    "nn-row|96x9007x3236 2048x256x2048 1024x1024x1024 17271x93x1996 4096x512x1024||$incumbents"
    "tt-col|2435x194x2049 7562x265x294 116x13043x388|--trans TT --layout col|$incumbents"
    "tn-row|2862x125x1718 10055x113x3870 346x197x19023 89x909x2487|--trans TN|$incumbents"
    "nt-row|682x198x2290 490x299x11766 260x165x1215|--trans NT|$incumbents"
    "nn-col|134x1237x15923 438x2618x2638 1471x1204x1211|--layout col|$incumbents"
    "tf32|1024x1024x1024 1000x1000x1000 2048x2048x2048 8192x8192x256 1024x1024x65536|--math tf32|mmatf32,tma_wgmmatf32"
  )
  corpus_retime=(${CORPUS_RETIME:-RETIME_SIDE_ABOVE=64})
fi
[ -n "${CASES_FILE:-}" ] && mapfile -t cases <"$CASES_FILE"
for c in "${cases[@]}"; do
  [ -n "$c" ] || continue
  IFS='|' read -r name shapes opts others <<<"$c"
  if [ "$(left)" -lt 200 ]; then
    status "bench $name" "not run: too little time left"
    continue
  fi
  # shellcheck disable=SC2086
  timeout "$(left)" "$cli" bench $shapes $opts --split-k pow2 \
    --algo "$(echo "$algos,$others" | tr , '\n' | awk '!seen[$0]++' | paste -sd,)" \
    --prune 3 --repeats 10 --min-timed-ms 1 --json "$top/mid-$name.json" >"$out/bench-$name.log" 2>&1
  status "bench $name" "rc $? at $SECONDS s"
done

if command -v compute-sanitizer >/dev/null 2>&1; then
  for r in $rungs; do
    for tool in racecheck synccheck; do
      clean=1
      [ "$(left)" -lt 150 ] && { status "$tool $r" "not run: too little time left"; continue; }
      timeout 60 compute-sanitizer --tool "$tool" --error-exitcode 3 "$cli" verify --algo "$r" \
        --layout col --trans TT --shape 130x200x260 --batch 2 --beta 0.5 --misalign \
        >>"$out/sanitizer.log" 2>&1 || clean=0
      status "$tool $r" "$([ $clean = 1 ] && echo clean || echo 'ERRORS (sanitizer.log)')"
    done
  done
fi

if [ "${CORPUS:-1}" = 1 ] && [ "$(left)" -gt 60 ]; then
  env OUT="$top/corpus" BUILD_DIR="$build" DEADLINE=$(($(left) - 15)) "${corpus_retime[@]}" \
    ALGOS="${CORPUS_ALGOS:-$algos}" MIN_TIMED_MS=1 scripts/device_corpus.sh >"$out/corpus.log" 2>&1
  status "corpus rows (${corpus_retime[*]})" "rc $? at $SECONDS s"
  mv "$top/corpus/corpus-json.tgz" "$top/corpus-json.tgz" 2>/dev/null
  mv "$top/corpus/corpus-logs.tgz" "$top/corpus-logs.tgz" 2>/dev/null
  rmdir "$top/corpus" 2>/dev/null
fi

{
  echo "== summary"
  cat "$summary"
  echo "== fastest split of each rung, ms, and its ratio to cuBLAS (SGEMM; tf32: FAST_TF32)"
  python3 - "$top" <<'PY'
import glob, json, sys
top = sys.argv[1]
for path in sorted(glob.glob(f"{top}/mid-*.json")):
    try:
        run = json.load(open(path))
    except (OSError, ValueError):
        print(f"{path}: unreadable")
        continue
    tf32 = path.endswith("tf32.json")
    best = {}
    for r in run["results"]:
        ms = r.get("median_ms")
        if r.get("status") not in ("OK", "LOWPREC") or not isinstance(ms, (int, float)):
            continue
        shape = f'{r["m"]}x{r["n"]}x{r["k"]} {r.get("trans", "NN")} {r.get("layout", "row")}'
        rung = r["algo"].split("/")[0]
        base = r.get("cublas_tf32_median_ms" if tf32 else "cublas_median_ms")
        cur = best.setdefault(shape, {})
        if rung not in cur or ms < cur[rung][0]:
            cur[rung] = (ms, base / ms if base else float("nan"), r["algo"])
    for shape, entries in best.items():
        line = "  ".join(f"{a} {v[1]:.2f}" for a, v in sorted(entries.items(), key=lambda e: e[1][0])[:5])
        print(f"{shape:28} {line}")
PY
} | tee "$top/table.txt"
(cd "$top" && ls mid-*.json >/dev/null 2>&1 && tar -czf mid-json.tgz --remove-files mid-*.json)
tar -C "$out" -czf "$top/0-logs.tgz" . && rm -rf "$out" "$top/bins"
