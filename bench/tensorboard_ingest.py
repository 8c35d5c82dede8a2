"""TensorBoard ingest catch-up: Orrery vs TensorBoard's own reader over the same event file
(bench/RESULTS.md "TensorBoard ingest").

    .venv/bin/python bench/tensorboard_ingest.py BUILD_DIR [--scalars 1000000] [--rounds 3]

Writes one event file of N scalars with torch.utils.tensorboard's SummaryWriter (tests/data/
tb_write.py), then times, on that file: TensorBoard's EventAccumulator with size_guidance
scalars=0 (keep every point) from Reload() to the last scalar in memory, and BUILD_DIR/bin/
bench_tfevents (parse only, and the catch-up into a fresh store: points and offset committed per
32 MiB read). Medians over the rounds. Prints a Markdown table.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("--scalars", type=int, default=1_000_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--dir", help="reuse this directory's bench/ event file if present")
    a = p.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    work = a.dir or tempfile.mkdtemp(prefix="orrery-tb-bench-")
    files = glob.glob(os.path.join(work, "bench", "*tfevents*"))
    if not files:
        t = time.perf_counter()
        subprocess.run([sys.executable, os.path.join(here, "..", "tests", "data", "tb_write.py"), work,
                        "--scalars", str(a.scalars)], check=True)
        print(f"wrote {a.scalars} scalars in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        files = glob.glob(os.path.join(work, "bench", "*tfevents*"))
    path = files[0]

    from tensorboard.backend.event_processing import event_accumulator as ea

    tb = []
    count = 0
    for _ in range(a.rounds):
        t = time.perf_counter()
        acc = ea.EventAccumulator(path, size_guidance={ea.SCALARS: 0})
        acc.Reload()
        count = len(acc.Scalars("bench/loss"))
        tb.append(time.perf_counter() - t)
    ours = json.loads(subprocess.run([os.path.join(a.build, "bin", "bench_tfevents"), path, str(a.rounds)],
                                     check=True, capture_output=True, text=True).stdout)
    tb_s = statistics.median(tb)
    print(f"file: {os.path.getsize(path) / 1e6:.1f} MB, {count} scalars (TensorBoard), {ours['points']} (Orrery)")
    print()
    print("| reader | seconds | points/s | vs TensorBoard |")
    print("|---|---|---|---|")
    print(f"| TensorBoard EventAccumulator (size_guidance scalars=0) | {tb_s:.2f} | {count / tb_s:,.0f} | 1x |")
    print(f"| Orrery catch-up into the store (parse + SQLite, one transaction per 32 MiB) | {ours['ingest_s']:.3f} | "
          f"{ours['ingest_points_per_s']:,.0f} | **{ours['ingest_points_per_s'] / (count / tb_s):.1f}x** |")
    print(f"| Orrery parse only (tfevents.h) | {ours['parse_s']:.3f} | {ours['parse_points_per_s']:,.0f} | "
          f"{ours['parse_points_per_s'] / (count / tb_s):.1f}x |")


if __name__ == "__main__":
    main()
