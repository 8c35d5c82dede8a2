#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# What freezing a command sweep's code costs (docs/sweeps.md "Each trial in its own directory"):
# a 200 MB project directory beside 10 GB of data, frozen by resources/sweep/orrery-code.sh as a
# submission does, then one trial's directory made from it. Prints the time of each and the extra
# disk the snapshot takes, against the data's size.
#
#   bench/code_snapshot.sh [WORKDIR]      (default: a directory under /tmp, removed afterwards)
#
# The project, a git clone as a user has it: 3,000 tracked source files (60 MB, incompressible
# bytes, so git's objects take as much again in .git), 80 MB of git-ignored checkpoints from an
# earlier run (an output of a run: left out) and a git-ignored data/ of 10 GB (sparse files: the
# snapshot links the directory and never reads it, so their blocks do not matter).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
script="$here/../resources/sweep/orrery-code.sh"
work=${1:-$(mktemp -d /tmp/orrery-code-bench.XXXXXX)}
[[ $# -ge 1 ]] || trap 'rm -rf -- "$work"' EXIT
proj="$work/project"
rm -rf -- "$proj" "$work/sweep"
mkdir -p "$proj/src" "$proj/data" "$proj/checkpoints"
python3 - "$proj" <<'PY'
import os, sys
proj = sys.argv[1]
rng = open("/dev/urandom", "rb")
for i in range(3000):
    d = os.path.join(proj, "src", f"pkg{i % 50}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"mod{i}.py"), "wb") as f:
        f.write(rng.read(20 * 1024))
for i in range(8):
    with open(os.path.join(proj, "checkpoints", f"step-{i}.pt"), "wb") as f:
        f.write(rng.read(10 * 1024 * 1024))
for i in range(10):  # 10 x 1 GiB, sparse
    with open(os.path.join(proj, "data", f"shard-{i}.bin"), "wb") as f:
        f.truncate(1 << 30)
PY
printf 'data/\ncheckpoints/\n' > "$proj/.gitignore"
git -C "$proj" init -q
git -C "$proj" add -A
git -C "$proj" -c user.email=b@example.org -c user.name=bench commit -q -m code
printf '# edited\n' >> "$proj/src/pkg0/mod0.py"  # a dirty tree: the diff is kept too

# The project's pages written out first (the disk is not still busy with them), then three
# snapshots into three sweeps, each timed: the median is reported, with the range.
sync
times=()
for i in 1 2 3; do
  rm -rf -- "$work/sweep"
  t0=$(date +%s%N)
  bash "$script" snapshot "$proj" "$work/sweep/code" > /dev/null
  t1=$(date +%s%N)
  times+=($((t1 - t0)))
  sync
done
read -r t_min t_med t_max < <(printf '%s\n' "${times[@]}" | sort -n | tr '\n' ' '; echo)
t1=$(date +%s%N)
bash "$script" view "$work/sweep/code" "$work/sweep/0/work"
t2=$(date +%s%N)
# du counts a hard-linked file once per run: the sweep dir as a whole minus the snapshot is what
# the trial's directory adds (its directories and links).
project=$(du -sb --exclude=data "$proj" | cut -f1)
data=$(du -sb --apparent-size "$proj/data" | cut -f1)
snapshot=$(du -sb "$work/sweep/code" | cut -f1)  # the diff is kept inside it
sweep=$(du -sb "$work/sweep" | cut -f1)
awk -v p="$project" -v d="$data" -v s="$snapshot" -v w="$sweep" -v lo="$t_min" -v med="$t_med" -v hi="$t_max" \
    -v t1="$t1" -v t2="$t2" 'BEGIN {
  printf "project (without data): %.0f MB; data: %.1f GB (linked, never read)\n", p / 1e6, d / 1e9
  printf "snapshot: %.2f s (of 3: %.2f-%.2f s), %.1f MB extra disk = %.2f%% of the data\n", med / 1e9, lo / 1e9, hi / 1e9, s / 1e6, 100 * s / d
  printf "a trial'"'"'s directory: %.2f s, %.2f MB (directories and links; the files are the snapshot'"'"'s)\n", (t2 - t1) / 1e9, (w - s) / 1e6
}'
