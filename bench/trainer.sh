#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# orrery-train's throughput against the same model and step in PyTorch (bench/peers/
# trainer_peer.py, eager and torch.compile), in one go on one machine (bench/RESULTS.md). CPU here;
# on a GPU machine the same script measures base and large in bf16 (CONFIGS="base large") and
# their MFU.
# Usage: bench/trainer.sh [WORK_DIR]
# Env: CONFIGS (tiny small) STEPS (20) WARMUP (5) TRAINER PYTHON
#      PEER_COMPILE (1 on CUDA: also time the peer under torch.compile) PEER (0: no peer at all)
#      PEAK_TFLOPS (the device's dense bf16 peak for MFU; H100/H200 SXM: 989.4, from the name)
#      SETS (extra --set KEY=VALUE words for orrery-train, e.g. "train.stop_check_every=1")
#
# MFU = FLOPs of one training step / step time / peak. The FLOPs are counted by PyTorch's
# FlopCounterMode over one step of the peer's model (forward and backward of every matrix
# product, convolution and attention), which is orrery-train's model layer for layer: the table
# shows both parameter counts, and no MFU is printed when they differ. RSS GB is each process's
# peak resident memory (orrery-train's perf/peak_rss_gb, the peer's getrusage maxrss).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${1:-$(mktemp -d /tmp/orrery-bench-trainer.XXXXXX)}
train=${TRAINER:-$root/build/dev/bin/orrery-train}
python=${PYTHON:-$root/.venv/bin/python}
steps=${STEPS:-20} warmup=${WARMUP:-5}
cuda=$("$python" -c 'import torch; print(int(torch.cuda.is_available()))' 2>/dev/null || echo 0)
peer_compile=${PEER_COMPILE:-$cuda}
results="$work/results.jsonl"
mkdir -p "$work" && : >"$results"
echo "# $(date -u +%F) $(uname -m), $(nproc) cores; $("$train" --version | head -1)"
[[ $cuda == 1 ]] && "$python" -c 'import torch; print("#", torch.cuda.get_device_name(0), torch.__version__)'
extra=()
for s in ${SETS:-}; do extra+=(--set "$s"); done
# The model the peer builds: it mirrors neither the first-sample options that tiny.yaml and
# dit-tiny.yaml turn on (pixel head, local mixing) nor x-prediction, so orrery-train runs without them.
same_model=(--set model.prediction=v --set model.pixel_head=false --set model.local_mixing=false)
for cfg in ${CONFIGS:-tiny small}; do
  run="$work/$cfg"
  rm -rf "$run"
  total=$((warmup + steps))
  # Windows of `warmup` steps; the first (compilation, allocator warm-up) is dropped. Stopping at
  # the last step skips the final samples and evaluation, which are not training throughput.
  "$train" --config "$root/resources/configs/$cfg.yaml" --run-dir "$run" \
    --set train.steps=$((total + 1)) --set train.log_every="$warmup" --set train.ckpt_every=0 \
    --set train.sample_every=0 --set train.eval_every=0 "${same_model[@]}" ${extra[@]+"${extra[@]}"} \
    --stop-at-step "$total" \
    >"$run.log" 2>&1 || [[ $? == 75 ]] || { tail -20 "$run.log"; exit 1; }
  "$python" - "$run/events.jsonl" "$cfg" <<'PY' | tee -a "$results"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
start = next(e["run"] for e in events if e.get("kind") == "start")
rows = [e["values"] for e in events if e.get("kind") == "metrics" and "perf/step_time_s" in e["values"]][1:]
mean = lambda k: sum(r.get(k, 0.0) for r in rows) / len(rows)
print(json.dumps({"config": sys.argv[2], "who": "orrery-train", "parameters": start.get("parameters"),
                  "samples_per_s": mean("perf/samples_per_s"), "step_time_s": mean("perf/step_time_s"),
                  "data_wait_frac": mean("perf/data_wait_frac"), "peak_mem_gb": mean("perf/gpu_mem_gb") or None,
                  "peak_rss_gb": max(r.get("perf/peak_rss_gb", 0.0) for r in rows) or None}))
PY
  modes=(eager)
  [[ $peer_compile == 1 ]] && modes+=(compile)
  [[ ${PEER:-1} == 0 ]] && modes=()
  for mode in ${modes[@]+"${modes[@]}"}; do
    flag=()
    [[ $mode == compile ]] && flag=(--compile)
    "$python" -W ignore "$root/bench/peers/trainer_peer.py" --config "$root/resources/configs/$cfg.yaml" \
      --steps "$steps" --warmup "$warmup" ${flag[@]+"${flag[@]}"} 2>"$work/$cfg-peer-$mode.log" |
      sed "s/^{/{\"config\": \"$cfg\", \"who\": \"peer-$mode\", /" | tee -a "$results" ||
      { tail -20 "$work/$cfg-peer-$mode.log"; exit 1; }
  done
done
"$python" - "$results" "${PEAK_TFLOPS:-}" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
peak = float(sys.argv[2]) if sys.argv[2] else None
if peak is None and any("H100" in str(r.get("device")) or "H200" in str(r.get("device")) for r in rows):
    peak = 989.4  # dense bf16 tensor-core peak of the SXM H100 and H200 (NVIDIA datasheet)
print(f"\n{'config':8} {'who':16} {'params':>11} {'samples/s':>10} {'step ms':>9} {'data wait':>9} "
      f"{'peak GB':>8} {'RSS GB':>7} {'TFLOP/s':>8} {'MFU':>6} {'vs eager':>9} {'vs compile':>10}")
for cfg in dict.fromkeys(r["config"] for r in rows):
    mine = [r for r in rows if r["config"] == cfg]
    peers = {r["who"]: r for r in mine if r["who"].startswith("peer")}
    eager = peers.get("peer-eager", {})
    flops = eager.get("flops_per_step") if eager.get("parameters") == mine[0].get("parameters") else None
    for r in mine:
        tf = flops / r["step_time_s"] / 1e12 if flops else None
        mfu = f"{100 * tf / peak:5.1f}%" if tf and peak else "-"
        ratio = lambda p: (f"{r['samples_per_s'] / peers[p]['samples_per_s']:8.2f}x"
                           if r["who"] == "orrery-train" and p in peers else "-")
        wait = f"{100 * r['data_wait_frac']:8.2f}%" if "data_wait_frac" in r else "-"
        mem = f"{r['peak_mem_gb']:8.2f}" if r.get("peak_mem_gb") else "-"
        rss = f"{r['peak_rss_gb']:7.2f}" if r.get("peak_rss_gb") else "-"
        print(f"{cfg:8} {r['who']:16} {r.get('parameters') or 0:11d} {r['samples_per_s']:10.1f} "
              f"{1e3 * r['step_time_s']:9.1f} {wait:>9} {mem:>8} {rss:>7} {tf or 0:8.2f} {mfu:>6} "
              f"{ratio('peer-eager'):>9} {ratio('peer-compile'):>10}")
PY
