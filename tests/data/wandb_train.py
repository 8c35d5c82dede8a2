# SPDX-License-Identifier: GPL-3.0-or-later
"""A training script written for W&B only (no Orrery in it), for tst_sweep_launch.

It uses wandb.init/config/log/run.log/summary/finish, W&B's step rules (auto-increment,
commit=False, step=, a step that goes back), nested dicts, values Orrery does not chart (a
table, a histogram, text), a wandb.Video from a file and a wandb.Image, as users' scripts do.
Orrery's capture module, on PYTHONPATH, records it; W&B runs as WANDB_MODE says.

    python wandb_train.py --lr LR --video FILE
"""

import argparse

import numpy as np
import wandb

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, required=True)
parser.add_argument("--video", required=True)
args = parser.parse_args()

run = wandb.init(project="orrery-capture-test", config={"lr": args.lr, "model": {"depth": 2}})
loss = 1.0
for i in range(6):
    loss *= 1.0 - args.lr
    wandb.log({"train/loss": loss, "opt": {"lr": args.lr}})           # rows 0..5
run.log({"eval/acc": 0.5}, commit=False)                              # joins row 6
run.log({"train/loss": loss / 2})                                     # row 6, then 7
run.log({"eval/acc": 0.75}, step=20)                                  # row 20 (not committed yet)
run.log({"eval/f1": 0.7}, step=20)                                    # row 20 too
run.log({"stale": 1.0}, step=3)                                       # dropped by W&B: 3 < 20
run.log({"table": wandb.Table(columns=["a"], data=[[1]]),
         "hist": wandb.Histogram([1.0, 2.0, 2.5]), "note": "text",
         "scalar": np.float32(0.25)})                                 # row 20, then 21
run.log({"samples/video": wandb.Video(args.video, format="mp4")})     # row 21
run.log({"samples/image": wandb.Image(np.full((8, 8, 3), 200, dtype=np.uint8))}, step=30)
wandb.config.update({"batch_size": 16})
wandb.summary["best/acc"] = 0.75
wandb.finish()
print("trained", flush=True)
