#!/usr/bin/env bash
# The README's two commands on a GPU machine as a new user meets them, and the time of a cold
# build; usually run as `scripts/device_check.sh --readme --cold-builds`.
#
#   scripts/first_run_check.sh [OUT_DIR] [README 0|1] [COLD_BUILDS 0|1]
#
#   README       a fresh clone of this tree, made without a network (of a scratch commit of its
#                unignored files where it has uncommitted changes or no .git), in a temporary
#                directory, then scripts/run.sh and scripts/test.sh in it, exactly as written,
#                timed, with apt-get and pip cut off (a stub apt-get that fails as an offline
#                mirror does, PIP_NO_INDEX) and TILEGEMM_REQUIRE_GPU=1 (a skipped GPU test fails)
#   COLD_BUILDS  a cold build of everything with -j<cores> in a new build directory: for the
#                GPU found here (the default) and for the portable list (TG_CUDA_ARCH=all)
# Writes OUT_DIR/first-run.json (times, exit codes, the CTest summary), OUT_DIR/table.txt
# (printed last) and OUT_DIR/0-logs.tgz, updated after every step, so that a run cut short
# still reports what it did.  DEADLINE (seconds from the start): a step still running then is
# stopped (rc 124), and later ones are skipped.  README_COMMANDS: the commands README runs
# (default "scripts/run.sh scripts/test.sh"; one of them where a call cannot hold both, each
# from its own fresh clone).
set -uo pipefail
cd "$(dirname "$0")/.."
here=$(pwd)
top=${1:-${OUT:-device-out}}
mkdir -p "$top/logs" && top=$(cd "$top" && pwd)
logs=$top/logs
readme=${2:-1}
cold=${3:-1}
commands=${README_COMMANDS:-scripts/run.sh scripts/test.sh}
jobs=$(nproc)
start=$SECONDS
work=$(mktemp -d "${TMPDIR:-/tmp}/tilegemm-first-run.XXXXXX")
trap 'rm -rf "$work"' EXIT

declare -A seconds=() rc=() note=()
steps=()
json_text() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | tr '\n\t' '  '; }
report() {
  {
    printf '{\n  "gpu": "%s",\n  "cores": %d,\n  "source": "%s",\n  "steps": [' \
      "$(json_text "$gpu")" "$jobs" "$(json_text "$how")"
    local sep=""
    for s in ${steps[@]+"${steps[@]}"}; do
      printf '%s\n    {"step": "%s", "rc": %s, "seconds": %s, "note": "%s"}' "$sep" "$s" \
        "${rc[$s]}" "${seconds[$s]}" "$(json_text "${note[$s]:-}")"
      sep=","
    done
    printf '\n  ]\n}\n'
  } >"$top/first-run.json"
  {
    echo "first run on $gpu, $jobs cores; source: $how"
    for s in ${steps[@]+"${steps[@]}"}; do
      printf '%-22s rc %-3s %5s s  %s\n' "$s" "${rc[$s]}" "${seconds[$s]}" "${note[$s]:-}"
    done
  } >"$top/table.txt"
  tar -C "$logs" -czf "$top/0-logs.tgz" . 2>/dev/null
}
left() { if [ -n "${DEADLINE:-}" ]; then echo $((DEADLINE - (SECONDS - start))); else echo 100000; fi; }
# step NAME LOG DIR COMMAND...: runs it in DIR, output to LOG, and records its time and status.
step() {
  local name=$1 log=$2 dir=$3 t0=$SECONDS
  shift 3
  steps+=("$name")
  if (($(left) < 30)); then
    rc[$name]='"skipped"' seconds[$name]=0 note[$name]="DEADLINE reached"
    report
    return
  fi
  echo "first_run_check: $name ..." >&2
  (cd "$dir" && timeout "$(left)" "$@") >"$log" 2>&1
  rc[$name]=$?
  seconds[$name]=$((SECONDS - t0))
  report
}

gpu=$(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader 2>/dev/null |
  head -n 1)
gpu=${gpu:-no GPU visible}

# A fresh clone: a new user's checkout, with no build directory, made without a network.  A
# clean git work tree is cloned as it is.  Otherwise (uncommitted changes, or a copy of a tree
# without its .git, as a device machine may get) the tree's files that .gitignore does not
# exclude are committed to a scratch repository first, and that is cloned.  A .git that git
# cannot read (copied from elsewhere, stale) counts as changes: its HEAD is not this tree.
src=$work/tilegemm
snapshot=$work/snapshot
git_in() { git -c user.name=first_run_check -c user.email=first_run_check@localhost "$@"; }
if ! command -v git >/dev/null; then
  mkdir -p "$src"
  tar --exclude='./build*' --exclude='./device-out' --exclude='__pycache__' --exclude='./.git' \
    -cf - . | tar -xf - -C "$src"
  how="copy of the tree (no git here), build directories left out"
elif [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$here" ] &&
  changes=$(git status --porcelain 2>/dev/null) && [ -z "$changes" ]; then
  git clone -q --no-hardlinks . "$src"
  how="git clone of $(git rev-parse --short HEAD)"
else
  if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$here" ]; then
    how="git clone of $(git rev-parse --short HEAD) with its uncommitted changes committed"
  else
    how="git clone of the tree as found (it has no .git), ignored files left out"
  fi
  git init -q "$snapshot"
  git_in --git-dir="$snapshot/.git" --work-tree="$here" add -A . &&
    git_in --git-dir="$snapshot/.git" --work-tree="$here" commit -qm "the tree as found" &&
    git clone -q "$snapshot" "$src" || { echo "first_run_check: cannot make a clone" >&2; exit 1; }
fi
echo "first_run_check: $how, in $src" >&2

if ((readme)); then
  # As on a machine without a package mirror: apt-get fails at once, pip finds no index.
  cutoff=$work/no-package-access
  mkdir -p "$cutoff"
  printf '#!/bin/sh\necho "E: no package mirror (cut off by first_run_check.sh)" >&2\nexit 100\n' \
    >"$cutoff/apt-get"
  chmod +x "$cutoff/apt-get"
  export PATH="$cutoff:$PATH" PIP_NO_INDEX=1 PIP_RETRIES=0
  export TILEGEMM_REQUIRE_GPU=1

  if [[ " $commands " == *" scripts/run.sh "* ]]; then
    step "scripts/run.sh" "$logs/run.log" "$src" scripts/run.sh
    note["scripts/run.sh"]="$(sed -n 's/^== run: \(.*\) took \([0-9]*\) s$/\1 \2 s/p' "$logs/run.log" |
      paste -sd, | sed 's/,/, /g'); $(grep -m 1 '^GPU code:' "$logs/run.log")"
    grep -hE '^ *[0-9]+x[0-9]+x[0-9]+ .*auto|^summary:' "$logs/run.log" >"$top/run-bench.txt"
  fi
  if [[ " $commands " == *" scripts/test.sh "* ]]; then
    step "scripts/test.sh" "$logs/test.log" "$src" scripts/test.sh
    after=$([[ " $commands " == *" scripts/run.sh "* ]] && echo "after run.sh" || echo "all of it")
    log=$logs/test.log
    parts=("$(sed -n "s/^test: built in \([0-9]*\) s.*/build ($after) \1 s/p" "$log")"
      "$(grep -m 1 -E 'tests passed|tests failed' "$log")"
      "$(sed -n 's/^Total Test time (real) = *\([0-9]*\).*/ctest \1 s/p' "$log")"
      "$(sed -n 's/.*Test *#[0-9]*: \([^ ]*\) .*\*\*\*Skipped.*/\1/p' "$log" | paste -sd' ' | sed 's/^./skipped: &/')"
      "$(grep -E 'Test +#[0-9]+: .* sec$' "$log" | sed -E 's/.*Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/' |
        sort -rn | head -n 4 | awk '{printf "%s%s %.0f s", (NR > 1 ? ", " : "slowest: "), $2, $1}')")
    note["scripts/test.sh"]=$(printf '%s\n' "${parts[@]}" | grep -v '^$' | paste -sd';' | sed 's/;/; /g')
  fi
  report
fi

if ((cold)); then
  for arch in native all; do
    dir=$work/build-$arch
    flags=(-DCMAKE_BUILD_TYPE=Release)
    [ "$arch" = native ] || flags+=(-DTG_CUDA_ARCH=all)
    step "configure ($arch)" "$logs/configure-$arch.log" "$src" cmake -S . -B "$dir" "${flags[@]}"
    note["configure ($arch)"]=$(grep -m 1 -E 'tilegemm: (building|no GPU visible)' "$logs/configure-$arch.log" |
      cut -c 1-160)
    step "cold build ($arch)" "$logs/build-$arch.log" "$src" cmake --build "$dir" -j"$jobs"
    rm -rf "$dir"
  done
  report
fi

report
cat "$top/table.txt"
rm -rf "$logs"
