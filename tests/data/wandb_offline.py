"""Writes a W&B offline run with the real wandb package (WANDB_MODE=offline: no network), for
tests/core/tst_tfevents.cpp: `wandb_offline.py OUT_DIR [STEPS]` -> OUT_DIR/wandb/offline-run-*/.

Config {lr: 0.01, layers: 4, opt: {name: adam}}; history train/loss = 1/(step+1) and acc =
step/1000 at steps 0..STEPS-1 (default 2000: the .wandb file spans several 32 KiB blocks and
records split across them); at step STEPS: an image, a video (an 8-frame clip), a histogram and
a table; at STEPS+1 a NaN; summary best = 0.125; exit code 0.
"""
import os
import sys

os.environ["WANDB_MODE"] = "offline"
os.environ["WANDB_SILENT"] = "true"
os.environ.setdefault("WANDB_DISABLE_GIT", "true")

import numpy as np
import wandb


def main():
    out = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    run = wandb.init(project="orrery-test", config={"lr": 0.01, "layers": 4, "opt": {"name": "adam"}}, dir=out)
    for i in range(steps):
        run.log({"train/loss": 1.0 / (i + 1), "acc": i / 1000.0}, step=i)
    rng = np.random.RandomState(0)
    run.log(
        {
            "sample/img": wandb.Image(rng.randint(0, 255, (8, 8, 3)).astype(np.uint8)),
            "sample/video": wandb.Video(rng.randint(0, 255, (8, 3, 16, 16)).astype(np.uint8), fps=4, format="gif"),
            "weights": wandb.Histogram([1, 2, 3]),
            "table": wandb.Table(columns=["a"], data=[[1]]),
        },
        step=steps,
    )
    run.log({"train/loss": float("nan")}, step=steps + 1)
    run.summary["best"] = 0.125
    run.finish()


if __name__ == "__main__":
    main()
