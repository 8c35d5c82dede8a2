#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# How long the test command's two builds take from nothing: for each revision, a clean clone,
# no compiler cache (CCACHE_DISABLE), `cmake --preset P && cmake --build --preset P` for the dev
# and asan presets one after the other, then where the compile time went (ninja's log: seconds
# of compiler work by part of the tree, and the slowest files). Revisions are timed one after the
# other on this machine, so compare them in one run of this script.
#
#   bench/build_time.sh [--presets "dev asan"] REV [REV...]     e.g. bench/build_time.sh a25d172 HEAD
#
# The clones share this checkout's .venv (LibTorch for the trainer): run scripts/setup first.
# Results: bench/RESULTS.md ("The test command's build").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
presets="dev asan"
if [[ ${1-} == --presets ]]; then
  presets=$2
  shift 2
fi
(($#)) || { echo "usage: $0 [--presets \"dev asan\"] REV [REV...]" >&2; exit 2; }
[[ -x $root/.venv/bin/python ]] || { echo "no $root/.venv: run scripts/setup first" >&2; exit 2; }

work=$(mktemp -d /tmp/orrery-build-time-XXXXXX)
trap 'rm -rf "$work"' EXIT
export CCACHE_DISABLE=1
rows=()
for rev in "$@"; do
  dir="$work/$(git -C "$root" rev-parse --short "$rev")"
  git clone -q "$root" "$dir"
  git -C "$dir" checkout -q "$rev"
  ln -s "$root/.venv" "$dir/.venv"
  for preset in $presets; do
    (cd "$dir" && cmake --preset "$preset" > "$dir/configure-$preset.log" 2>&1)
    start=$(date +%s.%N)
    (cd "$dir" && cmake --build --preset "$preset" > "$dir/build-$preset.log" 2>&1) ||
      { tail -20 "$dir/build-$preset.log"; exit 1; }
    seconds=$(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1])))" "$start" "$(date +%s.%N)")
    rows+=("$rev $preset ${seconds}s")
    echo "== $rev ($(git -C "$dir" log -1 --format=%h)) $preset: $seconds s on $(nproc) cores"
    python3 - "$dir/build/$preset/.ninja_log" <<'EOF'
import collections, sys
last = {}
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    start, end, _, out, _ = line.split("\t")
    last[out] = (int(end) - int(start)) / 1000
parts = collections.Counter()
for out, s in last.items():
    if out.endswith(".gch"):
        parts["precompiled headers"] += s
    elif out.endswith(".o"):
        top = out.split("/")[0]
        parts[("tests" if "/tst_" in out or top == "tests" else top) + " (compile)"] += s
    else:
        parts["link and generate"] += s
print(f"   {sum(last.values()):7.0f} s of work in {len(last)} steps")
for part, s in parts.most_common():
    print(f"   {s:7.0f} s {part}")
print("   slowest:", ", ".join(f"{o.split('/')[-1]} {s:.0f}s" for o, s in sorted(last.items(), key=lambda x: -x[1])[:5]))
EOF
  done
done
printf '%s\n' "${rows[@]}"
