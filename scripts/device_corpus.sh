#!/usr/bin/env bash
# The regret corpus's measurements, in one GPU call: build the CLI for the H100, then time every
# rung of the build at every count of split-K slices the planner may weigh (`--split-k planner`:
# 1 to 8, then the powers of two; SPLITS=pow2 for the powers of two alone), beside cuBLAS, on
# the random suite of each seed given (COUNT shapes each) and, with FIXED=1, on the fixed
# suites.  Hopeless entries are timed once (`--prune`).  One JSON a chunk under
# ${OUT:-device-out}, packed into one archive; bench/corpus.py turns them into
# tuning/regret_corpus_sm_90.tsv.
#
#   scripts/device_corpus.sh SEED [SEED...]     environment: COUNT (default 100), FIXED (0),
#                                               PRUNE (default 3), DEADLINE (seconds, 570),
#                                               ALGOS (default all: the rungs to time; name
#                                               the changed ones to re-time their rows, then
#                                               bench/corpus.py --refresh)
#   SPLITS=fine RETIME_SIDE_ABOVE=64 ALGOS=rung,... scripts/device_corpus.sh
#                                               the counts 3, 5, 6 and 7 alone on those
#                                               cases, then bench/corpus.py --add (keeps the
#                                               powers of two timed before)
#   SPLITS=fine RETIME_SPLIT_WITHIN=F ALGOS=rung,... scripts/device_corpus.sh
#                                               the same on the cases where a split entry
#                                               runs within F times the fastest
#   RETIME_BELOW=MS scripts/device_corpus.sh    re-times, with runs adding up to MIN_TIMED_MS
#                                               (default 2) each, the corpus's cases whose
#                                               fastest entry is under MS ms, a chunk per
#                                               layout and transposes; then --refresh
#   RETIME_K_AT_MOST=K ALGOS=rung scripts/device_corpus.sh
#                                               the same for the cases with k <= K: a rung
#                                               whose limit on k grew
#   RETIME_K_AT_LEAST=K ALGOS=rung scripts/device_corpus.sh
#                                               the same for the cases with k >= K: a 3xTF32
#                                               rung, which the fp32 mode runs from k = 256 on
#   RETIME_SIDE_ABOVE=S ALGOS=rung scripts/device_corpus.sh
#                                               the same for the cases with min(m, n) > S: a
#                                               new rung for medium and large outputs
#   RETIME_SIDE_BETWEEN=LO,HI[,KMIN[,KMAX]] ALGOS=rung scripts/device_corpus.sh
#                                               the same for the cases with LO < min(m, n) <= HI
#                                               (and KMIN <= k <= KMAX): a new rung, or new split
#                                               counts, for thin and medium outputs
#   RETIME_C_UNALIGNED=K ALGOS=rung scripts/device_corpus.sh
#                                               the same for the cases with k >= K whose C's
#                                               leading dimension is off 32 bytes: a change to
#                                               how a rung stores C
#   RETIME_C_ALIGNED=K ALGOS=rung scripts/device_corpus.sh
#                                               the same for the other cases with k >= K
#   ONLY=REGEX ...                            the chunks whose name (random-seedS, fixed,
#                                               short-LAYOUT-TRANS) matches alone: a re-timing
#                                               too long for one call, cut in two
#   RETIME_LACKING=rung ALGOS=rung scripts/device_corpus.sh
#                                               the same for the cases with no entry of the rung
#   RETIME_UNALIGNED=K ALGOS=rung scripts/device_corpus.sh
#                                               the same for the cases with k >= K whose A and B
#                                               both have leading dimensions off 16 bytes
#   RETIME_LONGER_UNALIGNED=K ALGOS=rung scripts/device_corpus.sh
#                                               the same for the cases with k >= K, C twice as
#                                               long as wide or more, and the longer side's
#                                               operand alone off 16 bytes
#   RETIME_ALL_AT_LEAST=S[,RUNG] ALGOS=rung scripts/device_corpus.sh
#                                               the same for the cases with m, n and k all at
#                                               least S, and with RUNG those where it has
#                                               entries: a rung auto admits on large products
#                                               alone (ozaki2_int8), its old rows refreshed
#   RETIME_WIDE_UNALIGNED=S ALGOS=rung scripts/device_corpus.sh
#                                               the same for the cases with both sides of C at
#                                               least S and A's or B's leading dimension off 16
#                                               bytes
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device_common.sh
device_setup 570 40
count=${COUNT:-100}
device_build
retime=() # the corpus's own cases to re-time, over runs adding up to 2 ms unless told
[ -n "${RETIME_BELOW:-}" ] && retime=(--shapes-below "$RETIME_BELOW")
[ -n "${RETIME_K_AT_MOST:-}" ] && retime=(--shapes-k-at-most "$RETIME_K_AT_MOST")
[ -n "${RETIME_K_AT_LEAST:-}" ] && retime=(--shapes-k-at-least "$RETIME_K_AT_LEAST")
[ -n "${RETIME_SIDE_ABOVE:-}" ] && retime=(--shapes-side-above "$RETIME_SIDE_ABOVE")
[ -n "${RETIME_SIDE_BETWEEN:-}" ] && retime=(--shapes-side-between "$RETIME_SIDE_BETWEEN")
[ -n "${RETIME_C_UNALIGNED:-}" ] && retime=(--shapes-c-unaligned "$RETIME_C_UNALIGNED")
[ -n "${RETIME_C_ALIGNED:-}" ] && retime=(--shapes-c-aligned "$RETIME_C_ALIGNED")
[ -n "${RETIME_LACKING:-}" ] && retime=(--shapes-lacking "$RETIME_LACKING")
[ -n "${RETIME_UNALIGNED:-}" ] && retime=(--shapes-unaligned "$RETIME_UNALIGNED")
[ -n "${RETIME_LONGER_UNALIGNED:-}" ] &&
  retime=(--shapes-longer-unaligned "$RETIME_LONGER_UNALIGNED")
[ -n "${RETIME_WIDE_UNALIGNED:-}" ] && retime=(--shapes-wide-unaligned "$RETIME_WIDE_UNALIGNED")
[ -n "${RETIME_SPLIT_WITHIN:-}" ] && retime=(--shapes-split-within "$RETIME_SPLIT_WITHIN")
[ -n "${RETIME_ALL_AT_LEAST:-}" ] && retime=(--shapes-all-at-least "$RETIME_ALL_AT_LEAST")
min_timed=${MIN_TIMED_MS:-$([ ${#retime[@]} -gt 0 ] && echo 2 || echo 0)}
common=(--algo "${ALGOS:-all}" --split-k "${SPLITS:-planner}" --prune "${PRUNE:-3}" --repeats 5 --warmup 1
  --min-timed-ms "$min_timed")
chunks=()
for s in "$@"; do chunks+=("random-seed$s"); done
[ "${FIXED:-0}" = 1 ] && chunks+=(fixed)
declare -A short=()
if [ ${#retime[@]} -gt 0 ]; then
  while read -r layout trans shapes; do
    chunks+=("short-$layout-$trans")
    short["short-$layout-$trans"]="$shapes"
  done < <(python3 bench/corpus.py "${retime[@]}" tuning/regret_corpus_sm_90.tsv)
fi

for chunk in "${chunks[@]}"; do
  [[ -n "${ONLY:-}" && ! $chunk =~ ${ONLY} ]] && continue
  if [ "$(left)" -lt 30 ]; then
    status "$chunk" "not run: too little time left"
    continue
  fi
  case $chunk in
  fixed) args=(--suite all --count 0 --trans NN,NT,TN,TT) ;;
  short-*)
    IFS=- read -r _ layout trans <<<"$chunk"
    read -ra args <<<"${short[$chunk]}"
    args+=(--layout "$layout" --trans "$trans")
    ;;
  *) args=(--suite random --seed "${chunk#random-seed}" --count "$count") ;;
  esac
  timeout "$(left)" "$cli" bench "${args[@]}" "${common[@]}" --json "$top/corpus-$chunk.json" \
    >"$out/$chunk.log" 2>&1
  status "$chunk" "rc $? at $SECONDS s"
done
echo "== summary"
cat "$summary"
tar -C "$top" -czf "$top/corpus-json.tgz" --remove-files $(cd "$top" && ls ./*.json 2>/dev/null)
tar -C "$out" -czf "$top/corpus-logs.tgz" . && rm -rf "$out"
