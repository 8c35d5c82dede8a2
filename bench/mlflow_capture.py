# SPDX-License-Identifier: GPL-3.0-or-later
"""What Orrery's MLflow capture adds to a `mlflow.log_metric` call (docs/sweeps.md "MLflow calls,
captured"), against the call's own cost.

A script logs `--calls` metrics with `mlflow.log_metric(key, value, step=i)` into MLflow 3's default
store (./mlflow.db, SQLite) in a fresh temporary directory, in fresh processes without the capture
and with it (PYTHONPATH and ORRERY_CAPTURE=1 as the executors set them), alternating, `--rounds`
times each. With the capture, the time its recording takes inside each call is also measured
directly (the wrapper's own work: far less noisy than the difference of two processes). Figures are
medians over the calls after a warm-up, then the median of the rounds.

    .venv/bin/python bench/mlflow_capture.py [--calls 400] [--rounds 3]

Needs mlflow (scripts/setup puts it in .venv); never touches a network.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURE = os.path.join(HERE, "..", "resources", "python", "orrery_capture")
LOGGER = os.path.join(HERE, "..", "resources", "python")


def worker(calls, warmup):
    import mlflow

    recorded = []
    om = sys.modules.get("orrery_mlflow")
    if om is not None:  # imported by the capture's hook with mlflow
        real = om._record_metrics

        def timed(*args):
            t = time.perf_counter()
            real(*args)
            recorded.append(time.perf_counter() - t)

        om._record_metrics = timed
    mlflow.set_experiment("bench")
    per_call = []
    with mlflow.start_run():
        for i in range(calls):
            t = time.perf_counter()
            mlflow.log_metric("train/loss", 1.0 / (i + 1), step=i)
            per_call.append(time.perf_counter() - t)
    print(json.dumps({"call": statistics.median(per_call[warmup:]),
                      "record": statistics.median(recorded[warmup:]) if recorded else None}))


def run(capture, calls, warmup):
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ)
        env.pop("ORRERY_CAPTURE", None)
        if capture:
            env.update(PYTHONPATH=os.pathsep.join([CAPTURE, LOGGER]), ORRERY_CAPTURE="1",
                       ORRERY_RUN_DIR=os.path.join(d, "run"))
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", str(calls), str(warmup)],
                             cwd=d, env=env, check=True, capture_output=True, text=True).stdout
        result = json.loads(out.strip().splitlines()[-1])
        if capture:
            with open(os.path.join(d, "run", "events.jsonl"), encoding="utf-8") as f:
                result["points"] = sum(1 for line in f if '"metrics"' in line)
        return result


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    warmup = min(50, args.calls // 4)
    without, with_ = [], []
    for _ in range(args.rounds):
        without.append(run(False, args.calls, warmup))
        with_.append(run(True, args.calls, warmup))
        assert with_[-1]["points"] == args.calls, with_[-1]
    call = statistics.median(r["call"] for r in without)
    call_with = statistics.median(r["call"] for r in with_)
    record = statistics.median(r["record"] for r in with_)
    print(f"mlflow.log_metric into ./mlflow.db, {args.calls} calls x {args.rounds} rounds (medians):")
    print(f"  MLflow alone:            {call * 1e6:9.1f} us a call")
    print(f"  with the capture:        {call_with * 1e6:9.1f} us a call")
    print(f"  the capture's recording: {record * 1e6:9.1f} us a call = {100 * record / call:.2f}% of MLflow's own")
    print(f"  every call recorded: {args.calls} of {args.calls} points in events.jsonl")


if __name__ == "__main__":
    main()
