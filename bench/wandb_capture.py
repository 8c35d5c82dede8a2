# SPDX-License-Identifier: GPL-3.0-or-later
"""What Orrery's W&B capture adds to a training step (docs/sweeps.md "W&B calls, captured").

A training loop as users write it: a small MLP on CPU (forward, backward, Adam), then
wandb.log of 20 scalars per step, W&B in offline mode. The same loop runs in fresh processes
without the capture module and with it (PYTHONPATH and ORRERY_CAPTURE=1 as the executors set
them), alternating, `--rounds` times each. Each process times every step and, inside it, the
wandb.log call alone; the figures are medians over the steps after a warm-up, and the median of
the rounds. The overhead is (log time with capture - log time without) / step time without:
the capture only adds work inside wandb.log, and timing that call is far less noisy than
comparing whole steps of two processes (both are shown).

    .venv/bin/python bench/wandb_capture.py [--steps 600] [--rounds 5] [--hidden 1024]

Needs torch and wandb (scripts/setup puts both in .venv); never touches a network.
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


def worker(steps, hidden, warmup):
    import torch
    import wandb

    # With the capture: the time spent in it, measured directly (far less noisy than the
    # difference of two processes): on the training thread per wandb.log (wall time), and the CPU
    # time of its writer thread (which encodes and writes the rows every 0.5 s) in all.
    spent = {"record": [], "writer": 0.0}
    oc = sys.modules.get("orrery_capture")
    if oc is not None:
        real_record, real_write = oc._record_log, oc._write_all

        def record(*args):
            t = time.perf_counter()
            real_record(*args)
            spent["record"].append(time.perf_counter() - t)

        def write_all():  # its CPU time: wall time here would count its waits for the GIL
            t = time.thread_time()
            real_write()
            spent["writer"] += time.thread_time() - t

        oc._record_log, oc._write_all = record, write_all
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(256, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 256))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(64, 256), torch.randn(64, 256)
    run = wandb.init(project="orrery-bench", config={"hidden": hidden})
    step_s, log_s = [], []
    for step in range(steps):
        t0 = time.perf_counter()
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        value = loss.item()  # what a script logging its loss does anyway
        values = {f"train/m{i:02d}": value * (i + 1) for i in range(19)}
        values["train/loss"] = value
        t1 = time.perf_counter()
        wandb.log(values)
        t2 = time.perf_counter()
        if step >= warmup:
            step_s.append(t2 - t0)
            log_s.append(t2 - t1)
    run.finish()
    captured = "orrery_capture" in sys.modules
    print(json.dumps({"captured": captured, "step_ms": statistics.median(step_s) * 1e3,
                      "log_us": statistics.median(log_s) * 1e6,
                      "record_us": statistics.median(spent["record"][warmup:]) * 1e6 if spent["record"] else 0.0,
                      "writer_us": spent["writer"] / steps * 1e6}))


def one(capture, steps, hidden, warmup, tmp, index):
    env = dict(os.environ)
    env.update({"WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_DISABLE_GIT": "true",
                "WANDB_DIR": tmp, "OMP_NUM_THREADS": "1"})
    env.pop("PYTHONPATH", None)
    for name in ("ORRERY_CAPTURE", "ORRERY_RUN_DIR", "ORRERY_EVENTS"):
        env.pop(name, None)
    if capture:
        run_dir = os.path.join(tmp, f"run-{index}")
        env.update({"PYTHONPATH": os.path.abspath(CAPTURE) + os.pathsep + os.path.abspath(LOGGER),
                    "ORRERY_CAPTURE": "1", "ORRERY_RUN_DIR": run_dir,
                    "ORRERY_EVENTS": os.path.join(run_dir, "events.jsonl")})
    out = subprocess.run([sys.executable, __file__, "--worker", "--steps", str(steps), "--hidden", str(hidden),
                          "--warmup", str(warmup)], env=env, check=True, capture_output=True, text=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    if result["captured"] != capture:
        sys.exit(f"the capture module was {'not ' if capture else ''}loaded where it should {'' if capture else 'not '}be")
    if capture:
        with open(os.path.join(tmp, f"run-{index}", "events.jsonl"), encoding="utf-8") as f:
            rows = sum(1 for line in f if '"kind":"metrics"' in line)
        if rows != steps:
            sys.exit(f"the capture wrote {rows} metric rows, not {steps}")
    return result


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--worker", action="store_true")
    a = p.parse_args()
    if a.worker:
        worker(a.steps, a.hidden, a.warmup)
        return
    runs = {False: [], True: []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            for capture in (False, True):
                runs[capture].append(one(capture, a.steps, a.hidden, a.warmup, tmp, r))
    keys = ("step_ms", "log_us", "record_us", "writer_us")
    med = {c: {k: statistics.median(x[k] for x in runs[c]) for k in keys} for c in runs}
    added_us = med[True]["log_us"] - med[False]["log_us"]
    print(f"{a.rounds} rounds x {a.steps} steps (first {a.warmup} not timed), MLP 256-{a.hidden}-256, batch 64, "
          "1 thread, 20 scalars per wandb.log, W&B offline")
    print("| | step (ms) | wandb.log (us) |")
    print("|---|---|---|")
    for c, name in ((False, "W&B offline"), (True, "W&B offline + Orrery capture")):
        print(f"| {name} | {med[c]['step_ms']:.3f} | {med[c]['log_us']:.1f} |")
    step_us = med[False]["step_ms"] * 1e3
    print(f"in the capture, measured inside the process: {med[True]['record_us']:.1f} us per wandb.log on the "
          f"training thread ({100 * med[True]['record_us'] / step_us:.2f} % of a step), {med[True]['writer_us']:.1f} us "
          f"of CPU per step in its writer thread ({100 * med[True]['writer_us'] / step_us:.2f} %); together "
          f"{100 * (med[True]['record_us'] + med[True]['writer_us']) / step_us:.2f} % of a step")
    print(f"between the processes: wandb.log {added_us:+.1f} us ({100 * added_us / step_us:+.2f} % of a step), whole "
          f"steps {100 * (med[True]['step_ms'] / med[False]['step_ms'] - 1):+.2f} % (W&B's own log varies more)")
    print("rounds (step ms, log us): without", [(round(x["step_ms"], 3), round(x["log_us"], 1)) for x in runs[False]],
          "with", [(round(x["step_ms"], 3), round(x["log_us"], 1)) for x in runs[True]])


if __name__ == "__main__":
    main()
