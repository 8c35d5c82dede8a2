"""Writes TensorBoard event files with the real writers, for tests/core/tst_tfevents.cpp and the
benchmark: `tb_write.py OUT_DIR [--scalars N]`.

OUT_DIR/torch/: torch.utils.tensorboard.SummaryWriter: add_scalar train/loss (steps 0..9, value
1/(step+1)), add_image (a 4x6 RGB PNG) at step 5, add_video (3 frames 8x8, an animated GIF) at
step 7, add_histogram at step 3, add_scalar new_style=True new/loss (a tensor under the
"scalars" plugin, steps 0..4, step/10) and new/double (double_precision, steps 0..2, step+0.5).
OUT_DIR/tbx/: tensorboardX: add_scalar train/loss (steps 0..9, 2*step), add_image at
step 2, add_video at step 4, add_text at step 1.
With --scalars N: OUT_DIR/bench/: one file of N scalars (tag bench/loss) through torch's writer.
"""
import os
import sys

import numpy as np


def main():
    out = sys.argv[1]
    if "--scalars" in sys.argv:
        n = int(sys.argv[sys.argv.index("--scalars") + 1])
        from torch.utils.tensorboard import SummaryWriter

        w = SummaryWriter(os.path.join(out, "bench"), max_queue=100000, flush_secs=3600)
        for i in range(n):
            w.add_scalar("bench/loss", 1.0 / (i + 1), i)
        w.close()
        return
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(os.path.join(out, "torch"))
    for i in range(10):
        w.add_scalar("train/loss", 1.0 / (i + 1), i)
    img = np.zeros((3, 4, 6), dtype=np.uint8)
    img[0] = 255
    w.add_image("sample/img", img, 5)
    video = np.random.RandomState(0).randint(0, 255, (1, 3, 3, 8, 8)).astype(np.uint8)
    w.add_video("sample/video", video, 7, fps=4)
    w.add_histogram("weights", np.arange(10), 3)
    for i in range(5):  # a tensor under the "scalars" plugin, as TensorFlow 2 writes scalars
        w.add_scalar("new/loss", i / 10.0, i, new_style=True)
    for i in range(3):
        w.add_scalar("new/double", i + 0.5, i, new_style=True, double_precision=True)
    w.close()

    import tensorboardX

    x = tensorboardX.SummaryWriter(os.path.join(out, "tbx"))
    for i in range(10):
        x.add_scalar("train/loss", 2.0 * i, i)
    x.add_image("sample/img", img, 2)
    x.add_video("sample/video", video, 4, fps=4)
    x.add_text("note", "hello", 1)
    x.close()


if __name__ == "__main__":
    main()
