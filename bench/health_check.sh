#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# What the deep health check (`orrery-train --health-check`, docs/sweeps.md "Health check") costs
# an attempt: the wall time of the whole process (LibTorch's load included, as the sbatch script's
# step pays it) and the check's own duration_ms, N times each for one node and for two "nodes"
# (two processes meeting over Gloo on this machine, as two nodes do over the network), against a
# 30-minute trial. Goal: < 2 % (issue 30). On a GPU machine the same script checks the GPUs.
# Usage: bench/health_check.sh [N] [WORK_DIR]
# Env: TRAINER (build/dev/bin/orrery-train) SETS (extra --set KEY=VALUE words, e.g. "cpu_memory_mb=256")
#      NODES ("1 2": the node counts to time; one GPU holds one rank, so a one-GPU machine takes NODES=1)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n=${1:-10}
work=${2:-$(mktemp -d /tmp/orrery-bench-health.XXXXXX)}
train=${TRAINER:-$root/build/dev/bin/orrery-train}
extra=()
for s in ${SETS:-}; do extra+=(--set "$s"); done
trial_ms=$((30 * 60 * 1000))
echo "# $(date -u +%F) $(uname -m), $(nproc) cores; $("$train" --version | head -1)"
ms() { date +%s%3N; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
for nodes in ${NODES:-1 2}; do
  walls=() checks=()
  for ((i = 0; i < n; i++)); do
    run="$work/$nodes-$i"
    rm -rf "$run" && mkdir -p "$run"
    port=$(free_port)
    t0=$(ms)
    pids=()
    for ((r = 0; r < nodes; r++)); do
      if ((nodes > 1)); then
        env SLURMD_NODENAME="node$((r + 1))" RANK=$r LOCAL_RANK=0 WORLD_SIZE=$nodes MASTER_ADDR=127.0.0.1 \
          MASTER_PORT="$port" "$train" --health-check --run-dir "$run" ${extra[@]+"${extra[@]}"} 2>/dev/null &
      else
        env SLURMD_NODENAME=node1 "$train" --health-check --run-dir "$run" ${extra[@]+"${extra[@]}"} 2>/dev/null &
      fi
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    walls+=($(($(ms) - t0)))
    checks+=("$(python3 -c 'import json,sys; print(max(json.load(open(f))["duration_ms"] for f in sys.argv[1:]))' "$run"/health/*.json)")
  done
  python3 - "$nodes" "$trial_ms" "${walls[*]}" "${checks[*]}" "$run"/health/node1.json <<'PY'
import json, statistics, sys
nodes, trial_ms = int(sys.argv[1]), int(sys.argv[2])
walls = [int(x) for x in sys.argv[3].split()]
checks = [int(x) for x in sys.argv[4].split()]
h = json.load(open(sys.argv[5]))
wall = statistics.median(walls)
print(f"| {nodes} node(s) | {wall:.0f} ms (min {min(walls)}, max {max(walls)}) | "
      f"{statistics.median(checks):.0f} ms | {100 * wall / trial_ms:.3f} % | "
      f"matmul {h['matmul_gflops']} GFLOP/s, memory {h['memory_gbps']} GB/s, busbw {h.get('busbw_gbps')} GB/s |")
PY
done
