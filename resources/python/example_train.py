# SPDX-License-Identifier: GPL-3.0-or-later
"""A stand-in for your own train.py, swept by resources/sweeps/own-command.yaml.

Plain Python (no packages): gradient descent on a noisy quadratic, printing `step=N loss=X` (the
spec reads that by regex) and logging the same through orrery_events (events.jsonl). It keeps a
checkpoint in its run dir, resumes from it when ORRERY_RESUME is 1, and on SIGTERM (Orrery's stop,
Slurm's preemption) saves and exits 75 so that Orrery runs it again.
"""

import argparse
import json
import os
import random
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from orrery_events import Run  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--momentum", type=float, default=0.0)
parser.add_argument("--steps", type=int, default=200)
parser.add_argument("--out", default="run")
args = parser.parse_args()

run = Run(args.out)
checkpoint = os.path.join(run.run_dir, "checkpoint.json")
state = {"step": 0, "x": 5.0, "v": 0.0}
if run.resumed and os.path.exists(checkpoint):
    with open(checkpoint, encoding="utf-8") as f:
        state = json.load(f)
    run.resumed_from(state["step"])
run.start({"lr": args.lr, "momentum": args.momentum, "steps": args.steps})

stopping = False


def on_term(signum, frame):
    global stopping
    stopping = True


signal.signal(signal.SIGTERM, on_term)


def save():
    with run.phase("checkpoint"):  # goodput: checkpointing, not training
        with open(checkpoint + ".tmp", "w", encoding="utf-8") as f:
            json.dump(state, f)
        os.replace(checkpoint + ".tmp", checkpoint)
    run.checkpointed(state["step"])


rng = random.Random(state["step"])
while state["step"] < args.steps:
    grad = 2 * state["x"] + rng.gauss(0, 0.5)
    state["v"] = args.momentum * state["v"] - args.lr * grad
    state["x"] += state["v"]
    state["step"] += 1
    loss = state["x"] ** 2
    print(f"step={state['step']} loss={loss:.6g}", flush=True)
    run.log(state["step"], {"train/x": state["x"]})
    if state["step"] % 50 == 0:
        save()
    if stopping:
        save()
        run.finish("preempted", "SIGTERM: checkpointed", state["step"])
        sys.exit(75)
    time.sleep(0.01)
run.finish(step=state["step"])
