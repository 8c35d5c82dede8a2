#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The trainer's GPU figures in one go on one GPU machine (bench/RESULTS.md, "orrery-train on a
# GPU"): builds orrery-train from the bundled source against that machine's own PyTorch, as a
# cluster would, then runs the stages named on the command line.
#
# Usage: bench/trainer_gpu.sh [STAGE...]   (default: build bench dit data nccl stopcheck)
#   build      cmake -S trainer against python3's torch (Release, sm_90 for H100/H200)
#   bench      bench/trainer.sh for small, base and large: orrery-train against the PyTorch peer,
#              eager and torch.compile, with MFU and peak memory
#   dit        the same for the video DiT (dit-base, dit-large): bf16 MFU of the transformer backbone
#   data       data wait of base with the moving shapes and with a folder of Y4M clips
#   nccl       the NCCL path in one process (dist.process_group=always, dist.shard=$SHARD, default
#              gradients): health check, buckets, checkpoint, a stop and a resume, checked against an
#              uninterrupted run
#   health     the deep health check's cost and its GPU figures (bench/health_check.sh, one node)
#   recompute  peak GPU memory and step time with and without activation checkpointing (RECOMPUTE_CONFIGS,
#              default dit-large; bench/activation_checkpointing.sh)
#   stopcheck  step time of small with the stop flag agreed every 1, 10 and 50 steps (EVERY)
#   profile    where a step's time goes, by kernel family, for orrery-train and both peers
#              (PROFILE_CONFIGS, default dit-large; bench/profile_families.py over their traces)
#   fused      the fused LayerNorm + modulation's CUDA kernel: tst_fused on the GPU, then 200 steps
#              of dit-large fused and unfused (losses within bf16 noise; step times)
#   ablation   dit-large with each step option on its own (fused modulation, bf16 weights, the
#              attention kernels, the batch)
#   sweep      a 4-trial sweep through the local executor (needs an orrery CLI: ORRERY_CLI)
# Issue 43's GPU run, in two calls of under 10 minutes each on one H100/H200 (estimates):
#   bench/trainer_gpu.sh build fused profile     (build ~3 min, fused ~3, profile ~3)
#   bench/trainer_gpu.sh ablation dit            (ablation ~2 min, dit ~4)
# Env: OUT (where logs go; default /tmp/orrery-gpu), SHARD (the nccl stage's dist.shard), DIT_CONFIGS (dit-base dit-large), DEPS (a folder with include/ and lib/ for
#      yaml-cpp, nlohmann-json and gloo headers, for a machine without them), ORRERY_CLI.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${OUT:-/tmp/orrery-gpu}
mkdir -p "$out"
build=${BUILD:-$root/build/gpu}
train=${TRAINER:-$build/bin/orrery-train}
python=$(command -v python3)
stages=("$@")
[[ ${#stages[@]} == 0 ]] && stages=(build bench dit data nccl stopcheck)
banner() { printf '\n=== %s (%s s)\n' "$*" "$SECONDS"; }
fail=0

for stage in "${stages[@]}"; do
  case $stage in
  build)
    banner "build orrery-train against $($python -c 'import torch; print(torch.__version__)')"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv,noheader
    g++ --version | head -1
    nvcc --version | tail -1
    deps=()
    if [[ -n ${DEPS:-} ]]; then
      deps=(-DORRERY_YAML_CPP_INCLUDE_DIR="$DEPS/include" -DORRERY_YAML_CPP_LIBRARY="$DEPS/lib/libyaml-cpp.a"
        -DORRERY_NLOHMANN_JSON_INCLUDE_DIR="$DEPS/include" -DORRERY_GLOO_INCLUDE_DIR="$DEPS/include")
    fi
    cmake -S "$root/trainer" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DORRERY_PYTHON="$python" -DORRERY_BUILD_TESTS=ON \
      -DTORCH_CUDA_ARCH_LIST=9.0 ${deps[@]+"${deps[@]}"} >"$out/configure.log" 2>&1 ||
      { tail -30 "$out/configure.log"; exit 1; }
    grep -E "orrery-train:" "$out/configure.log"
    cmake --build "$build" >"$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -30; exit 1; }
    grep -c "warning:" "$out/build.log" | sed 's/^/compiler warnings: /'
    "$train" --version
    ;;
  bench)
    banner "throughput: orrery-train against the PyTorch peer (eager, torch.compile)"
    TRAINER="$train" PYTHON="$python" CONFIGS="${CONFIGS:-small base large}" STEPS="${STEPS:-30}" WARMUP="${WARMUP:-10}" \
      "$root/bench/trainer.sh" "$out/bench" || fail=1
    ;;
  dit)
    banner "throughput of the DiT: orrery-train against the PyTorch peer (eager, torch.compile)"
    TRAINER="$train" PYTHON="$python" CONFIGS="${DIT_CONFIGS:-dit-base dit-large}" STEPS="${STEPS:-30}" \
      WARMUP="${WARMUP:-10}" "$root/bench/trainer.sh" "$out/bench-dit" || fail=1
    ;;
  data)
    banner "data wait: base with moving shapes, and with a folder of Y4M clips"
    clips="$out/clips"
    "$python" - "$clips" <<'PY'
# 64 clips of 48 frames at 128x128 (4:2:0), in two labelled subfolders: what data.kind=folder reads.
import os, sys
import numpy as np
root = sys.argv[1]
rng = np.random.default_rng(0)
yy, xx = np.mgrid[0:128, 0:128]
for k in range(64):
    d = os.path.join(root, f"class{k % 2}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"clip{k:03d}.y4m"), "wb") as f:
        f.write(b"YUV4MPEG2 W128 H128 F24:1 Ip A1:1 C420jpeg\n")
        cx, cy, vx, vy = rng.uniform(20, 100, 4)
        for t in range(48):
            x, y = (cx + t * (vx - 60) / 20) % 128, (cy + t * (vy - 60) / 20) % 128
            luma = np.where((xx - x) ** 2 + (yy - y) ** 2 < 200, 220, 30 + (xx // 4)).astype(np.uint8)
            f.write(b"FRAME\n" + luma.tobytes() + np.full(2 * 64 * 64, 128 + 40 * (k % 2), np.uint8).tobytes())
PY
    for kind in moving_shapes folder; do
      sets=()
      [[ $kind == folder ]] && sets=(--set data.kind=folder --set data.path="$clips" --set data.classes=2)
      rm -rf "$out/data-$kind"
      "$train" --config "$root/resources/configs/base.yaml" --run-dir "$out/data-$kind" --set train.steps=61 \
        --set train.log_every=10 --set train.ckpt_every=0 --set train.sample_every=0 --set train.eval_every=0 \
        ${sets[@]+"${sets[@]}"} --stop-at-step 60 >"$out/data-$kind.log" 2>&1
      "$python" - "$out/data-$kind/events.jsonl" "$kind" <<'PY' || fail=1
import json, sys
rows = [json.loads(l)["values"] for l in open(sys.argv[1]) if '"kind":"metrics"' in l]
rows = [r for r in rows if "perf/data_wait_frac" in r][1:]
w = sum(r["perf/data_wait_frac"] for r in rows) / len(rows)
s = sum(r["perf/step_time_s"] for r in rows) / len(rows)
print(f"data {sys.argv[2]:14} step {1e3 * s:7.1f} ms  data wait {100 * w:6.2f}%  ({'met' if w < 0.02 else 'NOT met'}: < 2%)")
PY
    done
    ;;
  nccl)
    banner "NCCL in one process (dist.shard ${SHARD:-gradients}): health check, buckets, checkpoint, stop, resume"
    common=(--config "$root/resources/configs/small.yaml" --set train.steps=60 --set train.log_every=10
      --set train.ckpt_every=20 --set train.sample_every=0 --set train.eval_every=60 --set dist.process_group=always
      --set dist.shard="${SHARD:-gradients}")
    rm -rf "$out/nccl-straight" "$out/nccl-resumed"
    export WORLD_SIZE=1 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29555
    "$train" "${common[@]}" --run-dir "$out/nccl-straight" >"$out/nccl-straight.log" 2>&1
    echo "uninterrupted: exit $?"
    "$train" "${common[@]}" --run-dir "$out/nccl-resumed" --stop-at-step 30 >"$out/nccl-stop.log" 2>&1
    echo "stopped at 30: exit $? (75: stopped, resumable)"
    "$train" "${common[@]}" --run-dir "$out/nccl-resumed" --resume auto >"$out/nccl-resume.log" 2>&1
    echo "resumed: exit $?"
    unset WORLD_SIZE RANK MASTER_ADDR MASTER_PORT
    "$python" - "$out/nccl-straight/events.jsonl" "$out/nccl-resumed/events.jsonl" <<'PY' || fail=1
import json, sys
def read(p):
    ev = [json.loads(l) for l in open(p)]
    starts = [e["run"] for e in ev if e["kind"] == "start"]
    loss = {e["step"]: e["values"]["train/loss"] for e in ev if e["kind"] == "metrics" and "train/loss" in e["values"]}
    ev_loss = [e["values"]["eval/loss"] for e in ev if e["kind"] == "metrics" and "eval/loss" in e["values"]]
    return starts, loss, ev_loss
s1, l1, e1 = read(sys.argv[1])
s2, l2, e2 = read(sys.argv[2])
for s in s1 + s2:
    print(f"start: device {s['device']} process group {s.get('process_group')} buckets {s.get('gradient_buckets')} "
          f"shard {s.get('shard')} precision {s['precision']} resumed from '{s.get('resumed_from')}'")
print("loss at 60: uninterrupted", l1.get(60), "stopped+resumed", l2.get(60), "| eval", e1, e2)
ok = all(s.get("process_group") == "nccl" and s.get("gradient_buckets", 0) > 0 for s in s1 + s2)
ok = ok and len(s2) == 2 and s2[1].get("resumed_from", "").startswith("step-")
ok = ok and l1.get(60) is not None and l2.get(60) is not None and abs(l1[60] - l2[60]) <= 0.02 * abs(l1[60])
print("nccl path:", "ok" if ok else "FAILED")
sys.exit(0 if ok else 1)
PY
    ;;
  health)
    banner "the health check on this GPU: matmul, memory, NCCL all-reduce"
    NODES=1 TRAINER="$train" "$root/bench/health_check.sh" "${HEALTH_N:-3}" "$out/health" || fail=1
    python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), indent=1))' "$out/health/1-0/health/node1.json" || true
    ;;
  recompute)
    banner "activation checkpointing: peak GPU memory and step time"
    TRAINER="$train" PYTHON="$python" CONFIGS="${RECOMPUTE_CONFIGS:-dit-large}" STEPS=6 WARMUP=2 \
      "$root/bench/activation_checkpointing.sh" "$out/recompute" || fail=1
    ;;
  stopcheck)
    banner "the stop-flag agreement's cost (small, NCCL group in one process)"
    for every in ${EVERY:-1 10 50}; do
      TRAINER="$train" PYTHON="$python" CONFIGS=small STEPS=100 WARMUP=20 PEER=0 \
        SETS="dist.process_group=always train.stop_check_every=$every" \
        "$root/bench/trainer.sh" "$out/stopcheck-$every" | grep -E "^small +orrery-train" | sed "s/^/stop_check_every=$every: /"
    done
    ;;
  profile)
    # One step's time by kernel family (GEMM, attention, normalisation + modulation, elementwise,
    # casts, optimizer, communication, idle) for orrery-train and both peers, on the same model.
    for cfg in ${PROFILE_CONFIGS:-dit-large}; do
      banner "profile: $cfg, 3 steps after 5, orrery-train and the peer (eager, torch.compile)"
      rm -rf "$out/profile-$cfg"
      "$train" --config "$root/resources/configs/$cfg.yaml" --run-dir "$out/profile-$cfg" --set train.steps=9 \
        --set train.profile_start=6 --set train.profile_steps=3 --set train.ckpt_every=0 --set train.sample_every=0 \
        --set train.eval_every=0 --set train.log_every=8 --set model.prediction=v --set model.pixel_head=false \
        --set model.local_mixing=false --stop-at-step 8 >"$out/profile-$cfg.log" 2>&1 || [[ $? == 75 ]] ||
        { tail -20 "$out/profile-$cfg.log"; fail=1; continue; }
      traces=("orrery-train=$out/profile-$cfg/profile/rank-0.pt.trace.json")
      for mode in eager compile; do
        flag=()
        [[ $mode == compile ]] && flag=(--compile)
        "$python" -W ignore "$root/bench/peers/trainer_peer.py" --config "$root/resources/configs/$cfg.yaml" \
          --steps 3 --warmup 5 ${flag[@]+"${flag[@]}"} --trace "$out/profile-$cfg-peer-$mode.json" \
          >"$out/profile-$cfg-peer-$mode.log" 2>&1 && traces+=("peer-$mode=$out/profile-$cfg-peer-$mode.json") ||
          { tail -5 "$out/profile-$cfg-peer-$mode.log"; fail=1; }
      done
      "$python" "$root/bench/profile_families.py" "${traces[@]}" || fail=1
    done
    ;;
  fused)
    # The fused LayerNorm + modulation's CUDA kernel (trainer/src/fused_cuda.cu) against LibTorch's
    # layer_norm + addcmul: the operator in process (tst_fused, CPU and CUDA), then FUSED_STEPS (200)
    # steps of FUSED_CONFIG (dit-large) each way: the losses and the step time.
    banner "fused LayerNorm + modulation: the kernel, then ${FUSED_STEPS:-200} steps of ${FUSED_CONFIG:-dit-large} each way"
    "$build/bin/tst_fused" || fail=1
    for v in off on; do
      rm -rf "$out/fused-$v"
      "$train" --config "$root/resources/configs/${FUSED_CONFIG:-dit-large}.yaml" --run-dir "$out/fused-$v" \
        --set train.steps=$((${FUSED_STEPS:-200} + 1)) --set train.log_every=10 --set train.ckpt_every=0 \
        --set train.sample_every=0 --set train.eval_every=0 --set train.fused_modulation=$v \
        --stop-at-step "${FUSED_STEPS:-200}" >"$out/fused-$v.log" 2>&1 || [[ $? == 75 ]] || { tail -20 "$out/fused-$v.log"; fail=1; }
    done
    "$python" - "$out/fused-off/events.jsonl" "$out/fused-on/events.jsonl" <<'PY' || fail=1
import json, sys
def read(p):
    rows = [json.loads(l) for l in open(p)]
    m = [(e["step"], e["values"]) for e in rows if e.get("kind") == "metrics" and "train/loss" in e["values"]]
    tags = {k: v for e in rows if e.get("kind") == "tags" for k, v in e["tags"].items()}
    return {s: v["train/loss"] for s, v in m}, sum(v["perf/step_time_s"] for _, v in m[1:]) / max(len(m) - 1, 1), tags
off, t_off, tags_off = read(sys.argv[1])
on, t_on, tags_on = read(sys.argv[2])
rel = max(abs(on[s] - off[s]) / abs(off[s]) for s in off if s in on)
print(f"unfused {1e3 * t_off:.1f} ms/step {tags_off}\nfused   {1e3 * t_on:.1f} ms/step {tags_on}  ({t_off / t_on:.3f}x)")
print(f"losses at {len(off)} log steps: largest relative difference {rel:.2e} (last: {off[max(off)]:.5f} vs {on[max(on)]:.5f})")
print("fused:", "ok" if rel < 0.02 and tags_on.get("orrery.train.fused_modulation") == "on" else "FAILED (more than bf16 noise)")
sys.exit(0 if rel < 0.02 else 1)
PY
    ;;
  ablation)
    # Each of the step's options on its own, dit-large (ABLATION_CONFIG), against the same run
    # without it: orrery-train alone (PEER=0); the dit stage has the peers.
    # The batch that fills the GPU: 4 needs an H200's memory without activation checkpointing.
    for sets in "train.fused_modulation=off" "train.fused_modulation=on" "train.bf16_weights=true" \
      "train.bf16_weights=true train.fused_modulation=on" "train.attention_backend=cudnn" "train.attention_backend=flash" "train.attention_backend=efficient" \
      "train.batch_size=4" "train.batch_size=8 train.activation_checkpointing=true"; do
      banner "ablation: ${ABLATION_CONFIG:-dit-large} with $sets"
      TRAINER="$train" PYTHON="$python" CONFIGS="${ABLATION_CONFIG:-dit-large}" STEPS="${STEPS:-20}" WARMUP="${WARMUP:-5}" \
        PEER=0 SETS="$sets" "$root/bench/trainer.sh" "$out/ablation" | grep -E "orrery-train" | tail -1 || fail=1
      grep -h '"tags"' "$out/ablation/${ABLATION_CONFIG:-dit-large}/events.jsonl" || true
    done
    ;;
  sweep)
    banner "a 4-trial sweep through the local executor"
    [[ -x ${ORRERY_CLI:-} ]] || { echo "no orrery CLI (set ORRERY_CLI)"; fail=1; continue; }
    ORRERY_TRAINER="$train" timeout 300 "$ORRERY_CLI" sweep submit "$root/resources/sweeps/gpu-local.yaml" --watch \
      >"$out/sweep.log" 2>&1
    echo "sweep: exit $?"
    tail -25 "$out/sweep.log"
    ;;
  *) echo "unknown stage $stage"; exit 2 ;;
  esac
done
banner "done"
exit $fail
