#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# What train.activation_checkpointing saves and costs: peak memory and step time of orrery-train
# with and without it, per config, on one machine in one go (bench/RESULTS.md). CPU: the
# process's peak RSS (perf/peak_rss_gb); CUDA: the peak allocated GPU memory (perf/gpu_mem_gb).
# Usage: bench/activation_checkpointing.sh [WORK_DIR]
# Env: CONFIGS (tiny small; also dit-tiny dit-small: resources/configs/<name>.yaml)
#      BATCH (the configs' own: a batch where activations dominate shows the saving; CPU: 32)
#      STEPS (6) WARMUP (2) TRAINER PYTHON
#      SETS (extra --set KEY=VALUE words, e.g. "train.precision=bf16")
# On a CPU shared with other work, OMP_NUM_THREADS=1: LibTorch's OpenMP threads spin while they
# wait, which makes busy-machine step times meaningless (tests/CMakeLists.txt).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${1:-$(mktemp -d /tmp/orrery-bench-recompute.XXXXXX)}
train=${TRAINER:-$root/build/dev/bin/orrery-train}
python=${PYTHON:-$root/.venv/bin/python}
steps=${STEPS:-6} warmup=${WARMUP:-2}
results="$work/results.jsonl"
mkdir -p "$work" && : >"$results"
echo "# $(date -u +%F) $(uname -m), $(nproc --all) cores, OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}, load $(cut -d' ' -f1-3 /proc/loadavg); $("$train" --version | head -1)"
extra=()
for s in ${SETS:-}; do extra+=(--set "$s"); done
[[ -n ${BATCH:-} ]] && extra+=(--set "train.batch_size=$BATCH")
for cfg in ${CONFIGS:-tiny small}; do
  for ac in false true; do
    run="$work/$cfg-$ac"
    rm -rf "$run"
    total=$((warmup + steps))
    # One window of `warmup` steps (dropped: allocator warm-up), then one of `steps`; the peak
    # memory is the run's, read at the last step. Stopping there skips the final samples.
    # The process's CPU seconds as well: on a machine shared with other work they move less than
    # the wall-clock step time does (start-up counts in both, the same for both).
    timer=(/usr/bin/time -f "%U %S" -o "$run.cpu")
    [[ -x /usr/bin/time ]] || { timer=(); echo "0 0" >"$run.cpu"; } # GNU time is not on every machine
    ${timer[@]+"${timer[@]}"} "$train" --config "$root/resources/configs/$cfg.yaml" --run-dir "$run" \
      --set train.activation_checkpointing=$ac --set train.steps=$((total + 1)) \
      --set train.log_every="$warmup" --set train.ckpt_every=0 --set train.sample_every=0 \
      --set train.eval_every=0 ${extra[@]+"${extra[@]}"} --stop-at-step "$total" \
      >"$run.log" 2>&1 || [[ $? == 75 ]] || { tail -20 "$run.log"; exit 1; }
    "$python" - "$run/events.jsonl" "$cfg" "$ac" "$run.cpu" "$total" <<'PY' | tee -a "$results"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
start = next(e["run"] for e in events if e.get("kind") == "start")
rows = [e["values"] for e in events if e.get("kind") == "metrics" and "perf/step_time_s" in e["values"]]
last = rows[-1]
user, system = map(float, open(sys.argv[4]).read().split()[-2:])
print(json.dumps({"config": sys.argv[2], "checkpointing": sys.argv[3] == "true",
                  "batch": start["params"]["train.batch_size"], "device": start["device"],
                  "precision": start["precision"], "step_time_s": last["perf/step_time_s"],
                  "peak_rss_gb": last.get("perf/peak_rss_gb"), "gpu_mem_gb": last.get("perf/gpu_mem_gb"),
                  "cpu_s_per_step": (user + system) / int(sys.argv[5]) or float("nan")}))
PY
  done
done
"$python" - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"\n{'config':10} {'batch':>5} {'device':6} {'prec':5} {'recompute':9} {'step ms':>8} {'peak RSS GB':>11} "
      f"{'GPU GB':>7} {'CPU s/step':>10} {'memory':>7} {'time':>6} {'CPU':>6}")
for cfg in dict.fromkeys(r["config"] for r in rows):
    off = next(r for r in rows if r["config"] == cfg and not r["checkpointing"])
    for r in (r for r in rows if r["config"] == cfg):
        mem = "gpu_mem_gb" if r["device"] == "cuda" and r["gpu_mem_gb"] else "peak_rss_gb"
        fmt = lambda v: f"{v:.3f}" if v else "-"
        print(f"{cfg:10} {r['batch']:>5} {r['device']:6} {r['precision']:5} {str(r['checkpointing']):9} "
              f"{1000 * r['step_time_s']:8.0f} {fmt(r['peak_rss_gb']):>11} {fmt(r['gpu_mem_gb']):>7} "
              f"{r['cpu_s_per_step']:10.2f} {r[mem] / off[mem]:6.2f}x {r['step_time_s'] / off['step_time_s']:5.2f}x "
              f"{r['cpu_s_per_step'] / off['cpu_s_per_step']:5.2f}x")
PY
