"""A training script that knows nothing of Orrery: it logs only through TensorBoard
(torch.utils.tensorboard) and writes sample files, for tests/integration/tst_sweep_tensorboard.cpp.

`tb_train.py --lr LR --out DIR [--steps N] [--step-seconds S]`: loss = (1 - lr)^step, logged as
train/loss under DIR/tb every step (flushed), a 3-frame video (add_video: an animated GIF) at
step 10, and a file DIR/samples/step_<N>.mp4 every 10 steps. SIGTERM ends it (exit 75).
"""
import argparse
import os
import signal
import sys
import time

import numpy as np
from torch.utils.tensorboard import SummaryWriter


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--step-seconds", type=float, default=0.05)
    a = p.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(75))
    w = SummaryWriter(os.path.join(a.out, "tb"), flush_secs=1)
    os.makedirs(os.path.join(a.out, "samples"), exist_ok=True)
    for step in range(a.steps):
        w.add_scalar("train/loss", (1.0 - a.lr) ** step, step)
        if step == 10:
            video = np.random.RandomState(0).randint(0, 255, (1, 3, 3, 8, 8)).astype(np.uint8)
            w.add_video("sample/video", video, step, fps=4)
        if step % 10 == 0:
            with open(os.path.join(a.out, "samples", "step_%d.mp4" % step), "wb") as f:
                f.write(b"not really a video")
        w.flush()
        time.sleep(a.step_seconds)
    w.close()


if __name__ == "__main__":
    main()
