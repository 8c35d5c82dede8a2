# SPDX-License-Identifier: GPL-3.0-or-later
"""Sharded data parallel (dist.shard) on CPU/Gloo: memory per rank and step time against world size.

    python3 bench/zero_memory.py BUILD_DIR [--channels 64,128] [--worlds 1,2,4] [--budget-gb 1.5]
                                           [--steps 2] [--out results.json]
                                           [--arch dit --depth 8] [--stages gradients,parameters]

For each model.channels, dist.shard (--stages; default none, optimizer, gradients) and world size,
one short run of orrery-train --nproc W on the test model's layout (tests/trainer/test.yaml)
scaled up in width, with 4 frames of 16x16 and batch 1 per rank, so that the parameters,
gradients and AdamW state dominate a rank's memory rather than activations. --arch dit: the DiT
of that width and --depth, its blocks recomputed (train.activation_checkpointing, which stage 3
needs) at every stage, so the stages differ in what they shard only. What each run reports itself:

- the parameter count and every rank's optimizer-state bytes as allocated (the start event's
  optimizer_state_bytes_per_rank) and its parameter + gradient + optimizer + EMA bytes kept between
  steps (model_state_bytes_per_rank);
- the largest peak RSS of any rank (perf/peak_rss_gb_max; one process: perf/peak_rss_gb);
- the step time of the last log window (perf/step_time_s), the first steps being warm-up.

Prints a Markdown table per model width, then the largest width whose every rank stays under
--budget-gb peak RSS at each stage and world size.
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAGES = ["none", "optimizer", "gradients"]


def run(trainer: Path, channels: int, shard: str, world: int, steps: int, work: Path, arch: str = "unet",
        depth: int = 4) -> dict:
    run_dir = work / f"c{channels}-{shard}-{world}"
    sets = [
        f"model.channels={channels}", f"dist.shard={shard}", f"train.steps={steps}",
        f"train.log_every={steps // 2}", "train.batch_size=1", "data.frames=4", "data.size=16",
        "train.sample_every=0", "train.eval_every=0", "train.ckpt_every=0", "data.workers=1",
        "train.system_every_s=0",
    ]
    if arch == "dit":
        sets += ["model.arch=dit", f"model.depth={depth}", "train.activation_checkpointing=true"]
    args = [str(trainer), "--config", str(ROOT / "tests/trainer/test.yaml"), "--run-dir", str(run_dir)]
    for s in sets:
        args += ["--set", s]
    if world > 1:
        args += ["--nproc", str(world)]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{run_dir.name}: exit {done.returncode}: {done.stderr[-2000:]}")
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines() if line]
    start = next(e for e in events if e.get("kind") == "start")["run"]
    last = [e for e in events if e.get("kind") == "metrics" and "perf/step_time_s" in e.get("values", {})][-1]
    values = last["values"]
    return {
        "channels": channels, "shard": shard, "world": world, "parameters": start["parameters"],
        "state_mb_max": max(start["optimizer_state_bytes_per_rank"]) / 1e6,
        "model_state_mb_max": max(start.get("model_state_bytes_per_rank", [0])) / 1e6,
        "peak_rss_gb_max": values.get("perf/peak_rss_gb_max", values["perf/peak_rss_gb"]),
        "step_time_s": values["perf/step_time_s"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--channels", default="64,128")
    ap.add_argument("--worlds", default="1,2,4")
    ap.add_argument("--budget-gb", type=float, default=1.5)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--arch", choices=["unet", "dit"], default="unet")
    ap.add_argument("--depth", type=int, default=4, help="--arch dit: blocks")
    ap.add_argument("--stages", default=",".join(STAGES))
    a = ap.parse_args()
    stages = a.stages.split(",")
    trainer = a.build_dir / "bin/orrery-train"
    rows = []
    with tempfile.TemporaryDirectory(prefix="zero-memory-") as tmp:
        for channels in [int(c) for c in a.channels.split(",")]:
            for world in [int(w) for w in a.worlds.split(",")]:
                for shard in stages:
                    r = run(trainer, channels, shard, world, a.steps, Path(tmp), a.arch, a.depth)
                    rows.append(r)
                    print(json.dumps(r), file=sys.stderr, flush=True)
    if a.out:
        a.out.write_text(json.dumps(rows, indent=1) + "\n")

    for channels in sorted({r["channels"] for r in rows}):
        mine = [r for r in rows if r["channels"] == channels]
        print(f"\nmodel.channels={channels}: {mine[0]['parameters'] / 1e6:.2f} M parameters\n")
        print("| world | dist.shard | optimizer state per rank (MB, max) | parameters + gradients + optimizer + EMA "
              "per rank (MB, max) | peak RSS per rank (GB, max) | step (s) | vs " + stages[0] + " |")
        print("|---|---|---|---|---|---|---|")
        for r in mine:
            base = next(x for x in mine if x["world"] == r["world"] and x["shard"] == stages[0])
            print(f"| {r['world']} | {r['shard']} | {r['state_mb_max']:.1f} | {r['model_state_mb_max']:.1f} | "
                  f"{r['peak_rss_gb_max']:.3f} | {r['step_time_s']:.3f} | "
                  f"{r['step_time_s'] / base['step_time_s']:.2f}x |")
    print(f"\nLargest model.channels under {a.budget_gb} GB peak RSS per rank:\n")
    print("| world | " + " | ".join(stages) + " |")
    print("|---|" + "---|" * len(stages))
    for world in sorted({r["world"] for r in rows}):
        cells = []
        for shard in stages:
            fit = [r for r in rows if r["world"] == world and r["shard"] == shard and r["peak_rss_gb_max"] <= a.budget_gb]
            best = max(fit, key=lambda r: r["channels"], default=None)
            cells.append(f"{best['channels']} ({best['parameters'] / 1e6:.1f} M)" if best else "none fits")
        print(f"| {world} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
