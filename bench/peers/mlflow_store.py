#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The peer of Orrery's ingest benchmark: MLflow's own SQLite store, through its Python client.

Reads the same events.jsonl files bench_store generated, and logs every metrics line's values with
MlflowClient.log_batch into a sqlite:/// backend, in batches of up to 1000 metrics (MLflow's
limit; 50 steps x 20 keys), so MLflow gets its most efficient call. Only the log_batch calls are
timed (parsing the JSON and building Metric objects is not), which favours MLflow.

Usage: mlflow_store.py RUNS_DIR DB_PATH [--runs N]
"""
import argparse
import glob
import json
import os
import sys
import time

from mlflow.entities import Metric
from mlflow.tracking import MlflowClient


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs_dir")
    ap.add_argument("db")
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(args.db + suffix):
            os.remove(args.db + suffix)
    client = MlflowClient(tracking_uri="sqlite:///" + args.db)
    exp = client.create_experiment("bench")
    dirs = sorted(glob.glob(os.path.join(args.runs_dir, "run-*")))[: args.runs]
    points = 0
    elapsed = 0.0
    for d in dirs:
        run = client.create_run(exp)
        batch = []
        with open(os.path.join(d, "events.jsonl")) as f:
            for line in f:
                ev = json.loads(line)
                if ev.get("kind") != "metrics":
                    continue
                ts = int(ev["t"] * 1000)
                for k, v in ev["values"].items():
                    batch.append(Metric(k, float(v), ts, ev["step"]))
                if len(batch) >= 1000:
                    t0 = time.perf_counter()
                    client.log_batch(run.info.run_id, metrics=batch[:1000])
                    elapsed += time.perf_counter() - t0
                    points += len(batch[:1000])
                    batch = batch[1000:]
        if batch:
            t0 = time.perf_counter()
            client.log_batch(run.info.run_id, metrics=batch)
            elapsed += time.perf_counter() - t0
            points += len(batch)
    size = sum(os.path.getsize(args.db + s) for s in ("", "-wal") if os.path.exists(args.db + s))
    print(f"mlflow: {points} points in {elapsed:.2f} s = {points / elapsed:.0f} points/s; "
          f"{size / 1e6:.1f} MB = {size / 1e6 / (points / 1e6):.1f} MB per million points")


if __name__ == "__main__":
    sys.exit(main())
