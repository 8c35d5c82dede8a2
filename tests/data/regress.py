# SPDX-License-Identifier: GPL-3.0-or-later
"""A small PyTorch regression that Orrery sweeps as "any training command" in the tests
(tests/integration/tst_sweep_command.cpp), as a user's own train.py would be.

It fits y = 3x + 1 by SGD and prints `step=N loss=X` each step (the spec's regexes read them),
checkpoints every 10 steps into its run dir and resumes from there when ORRERY_RESUME is 1, and
on SIGTERM checkpoints and exits 75 (preempted). Under srun each rank runs it, printing the same
lines (the spec's step regex keeps one point per step); only rank 0 writes files. With --events it also logs through Orrery's
Python logger (resources/python/orrery_events.py on PYTHONPATH) and writes one line with a bare
NaN, as json.dumps does. What it was given (argv and the ORRERY_* variables) goes to
given-<attempt>.json so a test can check that each value arrived as one argument.
"""

import argparse
import contextlib
import json
import os
import signal
import sys
import time

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, required=True)
parser.add_argument("--out", required=True)
parser.add_argument("--steps", type=int, default=60)
parser.add_argument("--tag", default="")
parser.add_argument("--step-seconds", type=float, default=0.05)
parser.add_argument("--events", action="store_true")
args = parser.parse_args()

# Under srun every rank runs this (a task per GPU); as in a DDP script, only rank 0 writes files.
rank = int(os.environ.get("SLURM_PROCID", os.environ.get("RANK", "0")))
os.makedirs(args.out, exist_ok=True)
attempt = os.environ.get("ORRERY_ATTEMPT", "0")
if rank == 0:
    with open(os.path.join(args.out, f"given-{attempt}.json"), "w", encoding="utf-8") as f:
        json.dump({"argv": sys.argv[1:], "cwd": os.getcwd(),
                   "env": {k: v for k, v in os.environ.items() if k.startswith("ORRERY_")}}, f)

stop = False


def on_term(signum, frame):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)

torch.manual_seed(0)
x = torch.linspace(-1, 1, 64).unsqueeze(1)
y = 3 * x + 1
model = torch.nn.Linear(1, 1)
with torch.no_grad():
    model.weight.fill_(0.0)
    model.bias.fill_(0.0)
opt = torch.optim.SGD(model.parameters(), lr=args.lr)
checkpoint = os.path.join(args.out, "checkpoint.pt")
start = 0
if os.environ.get("ORRERY_RESUME") == "1" and os.path.exists(checkpoint):
    state = torch.load(checkpoint)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    start = state["step"]
    print(f"resumed at step {start}", flush=True)

run = None
if args.events and rank == 0:
    from orrery_events import Run

    run = Run()
    if start:
        run.resumed_from(start)
    run.start({"lr": args.lr, "tag": args.tag})
    with open(os.path.join(args.out, "events.jsonl"), "a", encoding="utf-8") as f:
        f.write(json.dumps({"v": 1, "t": time.time(), "kind": "metrics", "step": start,
                            "values": {"probe/nan": float("nan"), "probe/inf": float("inf")}}) + "\n")


def save(step):
    if rank != 0:
        return
    with run.phase("checkpoint") if run else contextlib.nullcontext():
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, checkpoint + ".tmp")
        os.replace(checkpoint + ".tmp", checkpoint)
    if run:
        run.checkpointed(step)


for step in range(start, args.steps):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    print(f"step={step} loss={loss.item():.6f}", flush=True)
    if run:
        run.log(step, {"events/loss": loss.item()})
    if (step + 1) % 10 == 0:
        save(step + 1)
    if stop:
        save(step + 1)
        print("preempted: checkpointed", flush=True)
        sys.exit(75)
    time.sleep(args.step_seconds)
print("done", flush=True)
if run:
    run.finish(step=args.steps)
