#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Issue 30's array-limits check at full size: a grid sweep of TRIALS (default 1,200) trials of
# `true` on a fresh fixture Slurm with Slurm's default MaxArraySize (1001), through the real CLI
# (`sweep submit` + `sweep watch`). Prints the wall time, the arrays the sweep was submitted as,
# and whether every trial ran exactly once (one attempt each, all completed). Too slow for CI
# (about 0.5 s of Slurm per task on the 2-core machine): tst_sweep_limits runs 25 trials against
# MaxArraySize=10 instead.
#
#   bench/array_limits.sh BUILD_DIR [TRIALS] [MAX_CONCURRENT]
set -euo pipefail
build=$(realpath "${1:?usage: bench/array_limits.sh BUILD_DIR [TRIALS] [MAX_CONCURRENT]}")
trials=${2:-1200}
concurrent=${3:-2000}
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/orrery-bench-limits-XXXXXX)
state=$work/cluster.env
trap 'python3 "$src/tests/fixture/localcluster.py" down --state "$state" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
python3 "$src/tests/fixture/localcluster.py" up --state "$state" >&2
# shellcheck disable=SC1090
source <(python3 "$src/tests/fixture/localcluster.py" env --state "$state")
export HOME=$work/home XDG_CONFIG_HOME=$work/config XDG_DATA_HOME=$work/data
# The CLI reads the trainer's schema even for a command sweep: the build's trainer, else the
# stand-in a build without one makes for the tests.
if [ -z "${ORRERY_TRAINER:-}" ]; then
    ORRERY_TRAINER=$build/bin/orrery-train
    [ -x "$ORRERY_TRAINER" ] || ORRERY_TRAINER=$build/tests/trainer-standin/orrery-train
    export ORRERY_TRAINER
fi
mkdir -p "$HOME"
orrery=("$build/bin/orrery" --db "$work/orrery.sqlite")
"${orrery[@]}" cluster add fixture --host "$ORRERY_TEST_SSH_HOST" --port "$ORRERY_TEST_SSH_PORT" \
    --user "$ORRERY_TEST_SSH_USER" --identity "$ORRERY_TEST_SSH_KEY" --known-hosts "$ORRERY_TEST_SSH_KNOWN_HOSTS" \
    --remote-root "$ORRERY_TEST_JOBS_DIR/bench-limits" --partition gpu >/dev/null
values=$(seq -s, 0 $((trials - 1)))
cat > "$work/sweep.yaml" <<YAML
name: limits-$trials
command: ["true", "{{i}}"]
method: grid
parameters:
  i: {values: [$values]}
max_concurrent: $concurrent
resources: {nodes: 1, cpus_per_task: 1, mem: 64M, time: "00:05:00"}
YAML
start=$(date +%s.%N)
echo "submitting $trials trials at $(date -u +%T)" >&2
id=$("${orrery[@]}" sweep submit "$work/sweep.yaml" --cluster fixture --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
"${orrery[@]}" sweep watch "$id" --pace 0.5,2 >/dev/null 2>&1 || true
end=$(date +%s.%N)
"${orrery[@]}" sweep status "$id" --json | python3 -c '
import collections, json, sys
s = json.load(sys.stdin)
trials = s["trials"]
arrays = collections.Counter(t["task"].split("_")[0] for t in trials)
once = all(t["attempts"] == 1 and t["state"] == "completed" for t in trials)
state = s["state"]
print(f"sweep {state}: {len(trials)} trials, every one run exactly once: {once}")
print("arrays (job id: tasks):", ", ".join(f"{k}: {v}" for k, v in sorted(arrays.items())))
'
echo "wall: $(echo "$end - $start" | bc) s for $trials trials (MaxArraySize $(scontrol show config | awk '/^MaxArraySize/ {print $3}'))"
