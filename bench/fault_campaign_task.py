# SPDX-License-Identifier: GPL-3.0-or-later
"""One trial of the fault campaign (bench/fault_campaign.py): a training loop without a model.

It runs --steps steps of --step-seconds each (sleeping: the fixture's nodes share this machine's
two cores), logs train/loss through Orrery's events.jsonl writer (resources/python/orrery_events.py,
so `orrery runs goodput` sees its phases), checkpoints every --checkpoint-every steps into the run
directory and resumes from that checkpoint when Orrery runs it again. SIGTERM and SIGUSR1 (a
preemption, Slurm's warning before the time limit, Orrery's stop) save a checkpoint and exit 75.

--kind hang makes the trial stop making progress at step --hang-at (it sleeps, alive and silent,
as a process stuck in a collective does), once: the attempt after it runs through. Other kinds run
plainly (the campaign injects their faults from outside).
"""

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "resources" / "python"))
from orrery_events import Run  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--step-seconds", type=float, default=1.0)
    ap.add_argument("--checkpoint-every", type=int, default=10)
    ap.add_argument("--kind", default="plain")
    ap.add_argument("--hang-at", type=int, default=25)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()

    run_dir = Path(os.environ.get("ORRERY_RUN_DIR", "."))
    # Who ran this attempt, for bench/chaos.py's oracle (a second array queued by a lost reply
    # would run the trial again under a job id the store never recorded).
    with open(run_dir / "ledger.jsonl", "a") as ledger:
        ledger.write(json.dumps({k: os.environ.get(k, "") for k in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID",
                                                                     "SLURM_ARRAY_TASK_ID")} |
                                {"pid": os.getpid(), "t": time.time()}) + "\n")
    checkpoint = run_dir / "checkpoint.json"
    hung_once = run_dir / "hung-once"
    run = Run(str(run_dir))
    run.start({"lr": args.lr})

    step = 0
    if checkpoint.exists():
        step = json.loads(checkpoint.read_text())["step"]
        run.resumed_from(step)

    def save(at: int) -> None:
        with run.phase("checkpoint"):
            tmp = checkpoint.with_suffix(".tmp")
            tmp.write_text(json.dumps({"step": at}))
            tmp.replace(checkpoint)
        run.checkpointed(at)

    def preempted(signum, _frame):
        save(step)
        run.finish("preempted", f"signal {signum}", step=step)
        run.close()
        os._exit(75)

    signal.signal(signal.SIGTERM, preempted)
    signal.signal(signal.SIGUSR1, preempted)

    while step < args.steps:
        if args.kind == "hang" and step == args.hang_at and not hung_once.exists():
            hung_once.touch()
            while True:  # alive, silent: what a rank stuck in an all-reduce looks like
                time.sleep(3600)
        time.sleep(args.step_seconds)
        step += 1
        run.log(step, {"train/loss": 1.0 / (1.0 + args.lr * step)})
        print(f"step={step} loss={1.0 / (1.0 + args.lr * step):.6f}", flush=True)
        if step % args.checkpoint_every == 0:
            save(step)
    run.finish("completed", step=step)
    run.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
