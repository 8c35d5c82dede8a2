#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The tracking store's benchmark and its peer, in one go on one machine (bench/RESULTS.md):
#   1. bench_store on the full stream (1,000 runs x 20 keys x 5,000 steps = 100M points);
#   2. MLflow's SQLite store (bench/peers/mlflow_store.py) and Orrery on the SAME subset of those
#      files (PEER_RUNS runs; MLflow ingests ~100x slower, the full stream would take hours).
# Usage: bench/store.sh [WORK_DIR]   (needs a dev build and .venv-mlflow: scripts/setup)
# Env: RUNS (1000) KEYS (20) STEPS (5000) PEER_RUNS (4)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${1:-$(mktemp -d /tmp/orrery-bench-store.XXXXXX)}
bench="$root/build/dev/bin/bench_store"
runs=${RUNS:-1000} keys=${KEYS:-20} steps=${STEPS:-5000} peer_runs=${PEER_RUNS:-4}
[[ -x $bench ]] || { echo "build first: cmake --preset dev && cmake --build --preset dev" >&2; exit 1; }
echo "# $(date -u +%F) $(uname -m), $(nproc) cores; work dir $work"
"$bench" --dir "$work" --runs "$runs" --keys "$keys" --steps "$steps"
echo "# same data for both: the first $peer_runs runs"
"$bench" --dir "$work" --runs "$peer_runs" --keys "$keys" --steps "$steps" --tick-runs 0 | grep -E '^(ingest|size)'
"$root/.venv-mlflow/bin/python" "$root/bench/peers/mlflow_store.py" "$work/runs" "$work/mlflow.sqlite" --runs "$peer_runs"
