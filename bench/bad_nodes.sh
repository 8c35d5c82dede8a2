#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# bench/bad_nodes.sh BUILD_DIR [STEPS] [STEP_SECONDS]
#
# What a bad node costs a trial on the fixture's real Slurm (issue 30, "Bad nodes kept out"): the
# same one-trial command sweep (STEPS steps of STEP_SECONDS, checkpointing every step) three
# times through the real CLI, `retries: 0`:
#   none    no fault;
#   health  the first attempt's health check fails on its node (the command writes the health
#           check's exit.json, standing in for `health_check:`): the node becomes suspect and the
#           retry runs on the other node with --exclude, using no retry;
#   down    the trial's node is taken down at step STEPS/4 (and drained: the fixture's slurmd
#           lives on and ReturnToService=2 would bring it straight back); Slurm requeues the task,
#           the runner lists the node as suspect, and the task resumes on the other node from its
#           checkpoint. Slurm holds a requeued job ~121 s (BeginTime) before it may start again;
#           the benchmark releases it at once and prints the hold apart.
# Prints the wall time of each (submit to the sweep's end) and the extra time of each fault.
# Needs root (the fixture's daemons), like the integration tests.
set -euo pipefail

build=$(realpath "${1:?usage: bench/bad_nodes.sh BUILD_DIR [STEPS] [STEP_SECONDS]}")
steps=${2:-40}
step_seconds=${3:-0.25}
src=$(realpath "$(dirname "$0")/..")
work=$(mktemp -d)
state=$work/cluster.env
python3 "$src/tests/fixture/localcluster.py" up --state "$state" > /dev/null
trap 'python3 "$src/tests/fixture/localcluster.py" down --state "$state" > /dev/null; rm -rf -- "$work"' EXIT
eval "$(python3 "$src/tests/fixture/localcluster.py" env --state "$state")"

export HOME=$work/home XDG_CONFIG_HOME=$work/home/config XDG_DATA_HOME=$work/home/data
mkdir -p "$HOME"
unset SSH_AUTH_SOCK
if [[ -x $build/bin/orrery-train ]]; then
    export ORRERY_TRAINER=$build/bin/orrery-train
else
    export ORRERY_TRAINER=$build/tests/trainer-standin/orrery-train  # a command sweep needs no trainer
fi
orrery() { "$build/bin/orrery" --db "$HOME/orrery.sqlite" "$@"; }
orrery cluster add fixture --host "$ORRERY_TEST_SSH_HOST" --port "$ORRERY_TEST_SSH_PORT" \
    --user "$ORRERY_TEST_SSH_USER" --identity "$ORRERY_TEST_SSH_KEY" \
    --known-hosts "$ORRERY_TEST_SSH_KNOWN_HOSTS" --remote-root "$ORRERY_TEST_JOBS_DIR/bench" \
    --partition gpu > /dev/null

# The program: resumes from its step counter, logs each start with its node; with HEALTH=1 its
# first attempt writes a failed health check for its node and fails.
program='n=$(cat "$1/ckpt" 2>/dev/null || echo 0); echo "$SLURMD_NODENAME" > "$2"; '
program+='if [[ $3 == 1 && ! -e $1/health-failed ]]; then touch "$1/health-failed"; '
program+='printf "{\"state\":\"failed\",\"reason\":\"health check failed on %s: bench\",\"node\":\"%s\",\"cause\":\"health\",\"t\":%d}\n" '
program+='"$SLURMD_NODENAME" "$SLURMD_NODENAME" "$(date +%s)" > "$1/exit.json"; exit 1; fi; '
program+="while (( n < $steps )); do n=\$((n + 1)); echo \$n > \"\$1/ckpt\"; echo step=\$n; sleep $step_seconds; done"

spec() {  # NAME HEALTH
    local quoted=${program//\'/\'\'}
    cat > "$work/$1.yaml" << EOF
name: $1
experiment: bad-nodes-bench
command: [bash, -c, '$quoted', task, "{{run_dir}}", "$work/$1.node", "$2"]
method: grid
parameters:
  x: {values: [1]}
resources: {nodes: 1, cpus_per_task: 1, time: "00:10:00"}
retries: 0
EOF
}

now() { date +%s.%N; }

run() {  # NAME HEALTH DOWN -> prints the wall seconds
    local name=$1 health=$2 down=$3
    spec "$name" "$health"
    orrery cluster nodes fixture --clear-all > /dev/null
    local start id
    start=$(now)
    id=$(orrery sweep submit "$work/$name.yaml" --cluster fixture --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    orrery sweep watch "$id" --pace 0.25,0.5 > "$work/$name.watch" 2>&1 &
    local watcher=$! downed= released=
    while kill -0 "$watcher" 2> /dev/null; do
        if [[ $down == 1 && -z $downed && -s $work/$name.node ]]; then
            local dir ckpt
            dir=$(find "$ORRERY_TEST_JOBS_DIR/bench/bad-nodes-bench" -maxdepth 1 -name "$name-*" | head -n 1)
            ckpt=$(cat "$dir/0/ckpt" 2> /dev/null || echo 0)
            if (( ckpt >= steps / 4 )); then
                downed=$(cat "$work/$name.node")
                scontrol update nodename="$downed" state=down reason=bench
                scontrol update nodename="$downed" state=drain reason=bench
            fi
        fi
        if [[ -n $downed && -z $released ]] &&
            squeue -h -r -o '%r' -n "$name" | grep -q BeginTime; then
            scontrol update jobid="$(squeue -h -r -o '%i' -n "$name" | head -n 1)" StartTime=now
            released=1
        fi
        sleep 0.1
    done
    wait "$watcher" || true
    local end
    end=$(now)
    if [[ -n $downed ]]; then
        scontrol update nodename="$downed" state=resume > /dev/null 2>&1 || true
    fi
    grep -q "finished" "$work/$name.watch" || { cat "$work/$name.watch" >&2; exit 1; }
    python3 -c "print(f'{$end - $start:.1f}')"
}

none=$(run none 0 0)
health=$(run health 1 0)
down=$(run down 0 1)
suspects=$(orrery cluster nodes fixture --suspect --json)
printf 'trial of %d steps x %ss on the fixture (2 nodes), retries: 0\n' "$steps" "$step_seconds"
printf '%-8s %8s %10s\n' fault wall_s extra_s
printf '%-8s %8s %10s\n' none "$none" -
printf '%-8s %8s %10s\n' health "$health" "$(python3 -c "print(f'{$health - $none:.1f}')")"
printf '%-8s %8s %10s   (+ Slurm'"'"'s BeginTime hold of a requeued job, ~121 s, released here)\n' \
    down "$down" "$(python3 -c "print(f'{$down - $none:.1f}')")"
printf 'suspects after the last run: %s\n' "$suspects"
