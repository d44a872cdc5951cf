#!/usr/bin/env bash
# The mutation check: plants the bugs of scripts/mutants/catalogue.tsv one at a time in a
# scratch copy of the committed tree (HEAD), rebuilds incrementally, runs the tests the
# mutant names and reports whether they caught it.  Not part of CI (it takes about an hour on
# 2 cores); docs/testing.md records its last result.
#
#   scripts/mutate.sh [--only REGEX] [--list]
#
# The scratch copy and its build live in ${MUTATE_DIR:-build-mutate} (git-ignored) and are
# kept between runs, so a second run rebuilds only what changed.  The working tree is never
# touched; the mutated file in the scratch copy is restored on exit, even on Ctrl-C.
#
# Catalogue columns (tab-separated, '#' lines are comments):
#   id  scope  tests  file  search  replace  what
# tests:   a CTest regex to run; '!REGEX' runs every test but those; '-' the whole suite.
# scope:   cpu       build everything, run `tests`;
#          emulated  build only test_emulated_rungs (no nvcc), run `tests`;
#          python    no build, run `tests`;
#          device    a bug only a GPU can show: listed as "device", not run here (the test
#                    that catches it on a GPU is named in `what`).
# search:  text that must occur exactly once in `file`; replace: what it becomes (<empty> for
#          nothing).  Both take \n, \t and \\ escapes.
# Results: a line per mutant (caught / MISSED / device / stale / build-failed) and the total;
# logs in $MUTATE_DIR/logs/<id>.log, the table in $MUTATE_DIR/results.tsv.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
catalogue=$root/scripts/mutants/catalogue.tsv
only=
list=0
while [ $# -gt 0 ]; do
  case $1 in
    --only) only=$2; shift 2 ;;
    --list) list=1; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "mutate.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

mutants() { grep -v '^#' "$catalogue" | grep -v '^[[:space:]]*$' | { if [ -n "$only" ]; then awk -F'\t' -v re="$only" '$1 ~ re'; else cat; fi; }; }
if [ "$list" = 1 ]; then
  mutants | awk -F'\t' '{printf "%-28s %-9s %-40s %s\n", $1, $2, $4, $7}'
  exit 0
fi

work=$(realpath -m "${MUTATE_DIR:-build-mutate}")
src=$work/src
build=$work/build
mkdir -p "$work/logs"
jobs=${JOBS:-$(nproc)}

# The scratch copy: HEAD's files; only files whose content differs are rewritten, so the
# build stays incremental between runs.
python3 - "$root" "$src" <<'EOF'
import io, os, subprocess, sys, tarfile
root, dst = sys.argv[1:3]
archive = subprocess.run(["git", "-C", root, "archive", "HEAD"], check=True,
                         stdout=subprocess.PIPE).stdout
wanted = set()
with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
    for m in tar.getmembers():
        path = os.path.join(dst, m.name)
        if m.isdir():
            os.makedirs(path, exist_ok=True)
            continue
        wanted.add(os.path.normpath(path))
        data = tar.extractfile(m).read() if m.isfile() else None
        if m.issym():
            if os.path.islink(path) and os.readlink(path) == m.linkname:
                continue
            if os.path.lexists(path):
                os.remove(path)
            os.symlink(m.linkname, path)
            continue
        if os.path.exists(path) and open(path, "rb").read() == data:
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, m.mode)
for d, _, files in os.walk(dst):
    for f in files:
        p = os.path.normpath(os.path.join(d, f))
        if p not in wanted:
            os.remove(p)
EOF
head=$(git rev-parse --short HEAD)

cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTG_CUDA_ARCH="${TG_CUDA_ARCH:-90a}" \
  -DPython3_EXECUTABLE="$(command -v "${PYTHON:-python3}")" >"$work/logs/configure.log" 2>&1
echo "mutate.sh: HEAD $head, scratch copy $src; building it ($jobs jobs)..."
cmake --build "$build" -j"$jobs" >"$work/logs/baseline-build.log" 2>&1 ||
  { echo "mutate.sh: the unmutated tree does not build (logs/baseline-build.log)"; exit 1; }
if ! (cd "$build" && ctest -j"$jobs" >"$work/logs/baseline.log" 2>&1); then
  echo "mutate.sh: the unmutated suite fails (logs/baseline.log): no mutant can be judged"
  exit 1
fi
echo "mutate.sh: the unmutated suite passes"

saved=$work/original
mutated=
restore() {
  if [ -n "$mutated" ]; then
    cp -p "$saved" "$src/$mutated"
    mutated=
  fi
}
trap restore EXIT
trap 'restore; exit 130' INT TERM

results=$work/results.tsv
printf 'id\tscope\tresult\tseconds\twhat\n' >"$results"
caught=0 missed=0 device=0 broken=0 total=0
missed_ids=
while IFS=$'\t' read -r -u 3 id scope tests file search replace what; do
  total=$((total + 1))
  start=$(date +%s)
  log=$work/logs/$id.log
  if [ "$scope" = device ]; then
    result=device
    device=$((device + 1))
  else
    cp -p "$src/$file" "$saved"
    mutated=$file
    if ! python3 - "$src/$file" "$search" "$replace" >"$log" 2>&1 <<'EOF'
import codecs, sys
path, search, replace = sys.argv[1:4]
unescape = lambda s: codecs.decode(s.encode(), "unicode_escape")
search, replace = unescape(search), "" if replace == "<empty>" else unescape(replace)
text = open(path).read()
if text.count(search) != 1:
    sys.exit(f"{path}: the search text occurs {text.count(search)} times, not once")
open(path, "w").write(text.replace(search, replace))
EOF
    then
      result=stale
    else
      case $scope in
        cpu) target=all ;;
        emulated) target=test_emulated_rungs ;;
        *) target= ;;
      esac
      select=(-R "$tests")
      [ "$tests" = - ] && select=()
      [ "${tests#!}" != "$tests" ] && select=(-E "${tests#!}")
      if [ -n "$target" ] && ! cmake --build "$build" --target "$target" -j"$jobs" >>"$log" 2>&1; then
        result=build-failed
      elif (cd "$build" && ctest "${select[@]}" -j"$jobs" --stop-on-failure --output-on-failure \
              >>"$log" 2>&1); then
        result=MISSED
      else
        result=caught
      fi
    fi
    restore
    if [ "$scope" = emulated ]; then
      # The original content with its original time: the library's nvcc objects stay valid;
      # the emulator's rewritten copy is regenerated on its next build.
      rm -f "$build/tests/emulated/gen/stamp"
    else
      touch "$src/$file"
    fi
    case $result in
      caught) caught=$((caught + 1)) ;;
      MISSED) missed=$((missed + 1)); missed_ids="$missed_ids $id" ;;
      *) broken=$((broken + 1)) ;;
    esac
  fi
  seconds=$(($(date +%s) - start))
  printf '%-30s %-9s %-12s %4ss  %s\n' "$id" "$scope" "$result" "$seconds" "$what"
  printf '%s\t%s\t%s\t%s\t%s\n' "$id" "$scope" "$result" "$seconds" "$what" >>"$results"
done 3< <(mutants)

run=$((caught + missed))
echo
echo "mutate.sh: HEAD $head, $(date -u +%Y-%m-%d), $(nproc) cores: caught $caught of $run run on" \
     "this machine${missed_ids:+ (missed:$missed_ids)}; $device device-only (not run here)," \
     "$broken stale or not building, $total in the catalogue"
[ "$missed" -eq 0 ] && [ "$broken" -eq 0 ]
