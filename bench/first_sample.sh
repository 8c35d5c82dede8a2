#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# What the quickstart's trials learn in their budget: each variant is one trial of the README's
# local sweep (resources/sweeps/quickstart.yaml's settings, then the variant's own --set
# overrides), run two at a time with one thread each — as the local executor runs the sweep on a
# 2-core machine — and scored by the trainer's own evaluation of its final samples. Prints a
# markdown table (docs/trainer.md) and keeps each variant's contact sheet.
#
# Usage: bench/first_sample.sh OUT_DIR [VARIANTS_FILE]
#   VARIANTS_FILE: lines of "name | --set k=v --set k=v ..." (default: bench/first_sample.variants)
#   Env: TRAINER (build/dev/bin/orrery-train) CONFIG (resources/configs/tiny.yaml) JOBS (2)
#        THREADS (1: per variant) BASE ("--set optim.lr=3e-3 ...": the quickstart trial's settings)
# The ten-minute runs use it too: JOBS=1 THREADS=2 BASE="..." (bench/ten_minutes.variants says how).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:?usage: bench/first_sample.sh OUT_DIR [VARIANTS_FILE]}
variants=${2:-$root/bench/first_sample.variants}
train=${TRAINER:-$root/build/dev/bin/orrery-train}
config=${CONFIG:-$root/resources/configs/tiny.yaml}
jobs=${JOBS:-2}
threads=${THREADS:-1}
base=${BASE:---set optim.warmup_steps=10 --set train.steps=80 --set train.log_every=10 --set train.ckpt_every=40}
mkdir -p "$out"

run_one() {
  local name=$1 sets=$2 dir="$out/$1"
  rm -rf "$dir"
  local start=$SECONDS
  # shellcheck disable=SC2086  # the variant's overrides are words by design
  OMP_NUM_THREADS=$threads "$train" --config "$config" $base $sets --run-dir "$dir" >"$out/$name.log" 2>&1 ||
    echo "$name: exit $?" >&2
  echo $((SECONDS - start)) >"$dir/wall_s"
}

names=()
while IFS='|' read -r name sets; do
  [[ $name =~ ^[[:space:]]*# ]] && continue  # a comment (its words are not xargs' to parse)
  name=$(echo "$name" | xargs)
  [[ -z $name || $name == \#* ]] && continue
  names+=("$name")
  run_one "$name" "$sets" &
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
done <"$variants"
wait

echo "| variant | overrides | wall s | eval/loss | presence | colour error | core colour error | cohesion | score | data score |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for name in "${names[@]}"; do
  sets=$(grep -E "^ *$name *\|" "$variants" | head -1 | cut -d'|' -f2- | xargs)
  python3 - "$out/$name" "$name" "$sets" <<'PY'
import json, os, sys
d, name, sets = sys.argv[1:]
ev = {}
try:
    for line in open(os.path.join(d, "events.jsonl")):
        e = json.loads(line)
        if e.get("kind") == "metrics" and "eval/loss" in e["values"]:
            ev = e["values"]
except OSError:
    pass
wall = open(os.path.join(d, "wall_s")).read().strip() if os.path.exists(os.path.join(d, "wall_s")) else "?"
f = lambda k: f"{ev[k]:.3f}" if k in ev else "—"
print(f"| {name} | `{sets}` | {wall} | {f('eval/loss')} | {f('eval/sample_presence')} | "
      f"{f('eval/sample_colour_error')} | {f('eval/sample_core_colour_error')} | {f('eval/sample_cohesion')} | "
      f"{f('eval/sample_score')} | {f('eval/data_score')} |")
PY
done
