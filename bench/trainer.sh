#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# orrery-train's throughput against the same model and step in eager PyTorch (bench/peers/
# trainer_peer.py), in one go on one machine (bench/RESULTS.md). CPU here; on the GPU machine the
# same script measures base and large (CONFIGS="base large").
# Usage: bench/trainer.sh [WORK_DIR]   Env: CONFIGS (tiny small) STEPS (20) WARMUP (5)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${1:-$(mktemp -d /tmp/orrery-bench-trainer.XXXXXX)}
train=${TRAINER:-$root/build/dev/bin/orrery-train}
python=${PYTHON:-$root/.venv/bin/python}
steps=${STEPS:-20} warmup=${WARMUP:-5}
echo "# $(date -u +%F) $(uname -m), $(nproc) cores; $("$train" --version | head -1)"
for cfg in ${CONFIGS:-tiny small}; do
  run="$work/$cfg"
  rm -rf "$run"
  total=$((warmup + steps))
  # Windows of `warmup` steps; the first (compilation, allocator warm-up) is dropped. Stopping at
  # the last step skips the final samples and evaluation, which are not training throughput.
  "$train" --config "$root/resources/configs/$cfg.yaml" --run-dir "$run" \
    --set train.steps=$((total + 1)) --set train.log_every="$warmup" --set train.ckpt_every=0 \
    --set train.sample_every=0 --set train.eval_every=0 --stop-at-step "$total" >/dev/null 2>&1 || [[ $? == 75 ]]
  "$python" - "$run/events.jsonl" "$cfg" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"metrics"' in l]
rows = [r["values"] for r in rows if "perf/step_time_s" in r["values"]][1:]
st = sum(r["perf/step_time_s"] for r in rows) / len(rows)
sps = sum(r["perf/samples_per_s"] for r in rows) / len(rows)
dw = sum(r["perf/data_wait_frac"] for r in rows) / len(rows)
print(json.dumps({"trainer": "orrery-train", "config": sys.argv[2], "samples_per_s": sps, "step_time_s": st,
                  "data_wait_frac": dw}))
PY
  "$python" -W ignore "$root/bench/peers/trainer_peer.py" --config "$root/resources/configs/$cfg.yaml" \
    --steps "$steps" --warmup "$warmup" 2>/dev/null | sed "s/^{/{\"config\": \"$cfg\", /"
done
