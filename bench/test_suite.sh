#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The test command as a newcomer runs it: `./scripts/test` in a clean clone of this repository's
# HEAD (no .venv, no build directory; Debian packages and the wheel cache as the machine has them),
# N times in a row, then once more with `stress-ng --cpu NPROC` beside it for the whole run (a
# machine half as fast). Prints each run's steps (setup, configure, build, tests), the slowest
# tests, the tests that used the most CPU, and whether every test passed; exits non-zero if any run
# failed. The builds go without a compiler cache, as the test command's do by default; --ccache
# runs it with ORRERY_CCACHE=1 and the machine's cache (warm after the first run), --empty-ccache
# with ORRERY_CCACHE=1 and a cache of each run's own, empty.
#
#   bench/test_suite.sh [--runs N] [--no-stress] [--ccache | --empty-ccache] [--keep]
#
# Results: bench/RESULTS.md ("The test suite") and README's table.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=3 stress=1 keep=0 ccache=none
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --no-stress) stress=0; shift ;;
    --keep) keep=1; shift ;;
    --ccache) ccache=warm; shift ;;
    --empty-ccache) ccache=empty; shift ;;
    *) echo "usage: $0 [--runs N] [--no-stress] [--ccache | --empty-ccache] [--keep]" >&2; exit 2 ;;
  esac
done
if ((stress)) && ! command -v stress-ng >/dev/null; then
  apt-get install -y -q stress-ng >/dev/null
fi

work=$(mktemp -d /tmp/orrery-suite-XXXXXX)
failed=0
summary=()
one_run() {  # one_run LABEL
  local label=$1 dir="$work/$1" log="$work/$1.log" stress_pid=""
  git clone -q "$root" "$dir"
  git -C "$dir" checkout -q "$(git -C "$root" rev-parse HEAD)"
  if [[ $label == stress* ]]; then
    stress-ng --cpu "$(nproc)" --quiet &
    stress_pid=$!
  fi
  local started=$SECONDS status=0 cache=()
  [[ $ccache == warm ]] && cache=(env ORRERY_CCACHE=1)
  [[ $ccache == empty ]] && cache=(env ORRERY_CCACHE=1 "CCACHE_DIR=$work/$label.ccache")
  # Each test's wall and CPU seconds (tests/fixture/isolate.py), summed below by test.
  local cpu_log="$work/$label.cpu"
  (cd "$dir" && ORRERY_TEST_CPU_LOG="$cpu_log" "${cache[@]}" ./scripts/test) >"$log" 2>&1 || status=$?
  rm -rf "$work/$label.ccache"
  local total=$((SECONDS - started))
  [[ -n $stress_pid ]] && kill "$stress_pid" && wait "$stress_pid" 2>/dev/null || true
  # scripts/lib.sh prints "==> NAME" then "==> done in Ns" for each step.
  local steps
  steps=$(awk '/^==> done in/ {gsub("s","",$4); printf "%s %s, ", name, $4} /^==> [a-z]/ && !/done in/ {name=$2}' "$log")
  local result
  result=$(grep -E "tests passed|tests failed out of" "$log" | tail -1 || true)
  summary+=("$label: ${total}s (${steps%, }); ${result:-no ctest summary}; exit $status")
  echo "${summary[-1]}"
  grep -E "^ *[0-9]+/[0-9]+ Test" "$log" | awk '{print $(NF-1), $4}' | sort -rn | head -5 |
    sed 's/^/    slowest: /'
  if [[ -s $cpu_log ]]; then
    printf '    CPU seconds of the tests run through isolate.py: %s; the most:\n' \
      "$(awk -F'\t' '{all += $3} END {printf "%.0f", all}' "$cpu_log")"
    awk -F'\t' '{n = split($1, p, "/"); cpu[p[n]] += $3} END {for (t in cpu) printf "%.0f %s\n", cpu[t], t}' \
      "$cpu_log" | sort -rn | head -10 | sed 's/^/      /'
  fi
  ((status == 0)) || { failed=1; echo "    log: $log"; grep -A30 "tests failed" "$log" | tail -25; }
  ((keep)) || rm -rf "$dir"
}

for ((i = 1; i <= runs; i++)); do one_run "run$i"; done
((stress)) && one_run "stress"
printf '\n%s\n' "${summary[@]}"
((keep)) || rm -rf "$work"
exit "$failed"
