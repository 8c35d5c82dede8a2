#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a training step's time goes, by kernel family, for one or more Chrome traces of LibTorch's
profiler (Kineto): orrery-train's (train.profile_steps, profile/rank-0.pt.trace.json) and the
PyTorch peer's (bench/peers/trainer_peer.py --trace), side by side.

Both mark their steps alike (orrery::step, orrery::forward, orrery::backward, orrery::optimizer),
so the table is per step of the same work.

- On CUDA (the trace has kernels) each family is the summed time of its kernels on the device, and
  "idle" is the part of the profiled window in which no kernel, copy or memset ran.
- On CPU it is each operator's self time (its time less that of the operators it called) on the
  thread that ran the steps, and "host outside operators" is the rest of that thread's time inside
  the steps: the framework's own code, Python's for the peer.

Usage: profile_families.py [--json] NAME=TRACE [NAME=TRACE ...]
"""
import argparse
import json
import re
import sys
from collections import defaultdict

# First match wins, so the order matters: cuDNN's convolution kernels are implicit GEMMs, and the
# optimizer's foreach kernels are elementwise.
FAMILIES = [
    ("communication", r"nccl|gloo|c10d|all_?reduce|all_?gather|reduce_?scatter|barrier"),
    # Host only: autograd's nodes (their work is in the operators they call), views, allocation.
    ("framework (autograd, views)",
     r"^autograd::|Backward\d|AccumulateGrad|^aten::(empty|empty_strided|view|_unsafe_view|as_strided|t|"
     r"transpose|permute|reshape|expand|broadcast_tensors|select|slice|unsqueeze|squeeze|split|chunk|detach|alias|unbind)$"),
    ("optimizer", r"adam|multi_tensor|foreach|lerp"),
    ("attention", r"flash|fmha|attention|sdpa|softmax"),
    ("convolution", r"conv|fprop|dgrad|wgrad|winograd|implicit_gemm|im2col|col2im"),
    ("GEMM", r"gemm|cutlass|xmma|nvjet|cublas|fused_(add)?b?mm|aten::mm\b|aten::addmm|aten::bmm|aten::matmul|aten::linear"),
    ("normalisation + modulation", r"norm|addcmul"),
    ("casts + copies", r"copy|aten::to\b|_to_copy|(?<!broad)cast|convert|contiguous|clone"),
    ("elementwise + reductions", r"."),
]
_RULES = [(name, re.compile(rx, re.I)) for name, rx in FAMILIES]
DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def family(name):
    return next(f for f, rx in _RULES if rx.search(name))


def union_length(intervals):
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def summarise(path):
    """{family: microseconds per step}, the step count and whether it is a device profile."""
    with open(path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and "dur" in e]
    steps = [e for e in events if e.get("cat") == "user_annotation" and e["name"] == "orrery::step"]
    if not steps:
        raise SystemExit(f"{path}: no orrery::step marks (profile with train.profile_steps or --trace)")
    per_family = defaultdict(float)
    device = [e for e in events if e.get("cat") in DEVICE_CATS]
    if device:
        for e in device:
            per_family["casts + copies" if e["cat"] != "kernel" else family(e["name"])] += e["dur"]
        # The window: from the first device activity to the last (the profiler brackets the steps
        # with a device sync on both sides).
        span = max(e["ts"] + e["dur"] for e in device) - min(e["ts"] for e in device)
        per_family["idle"] = span - union_length([(e["ts"], e["ts"] + e["dur"]) for e in device])
    else:
        thread = steps[0]["tid"]
        windows = [(s["ts"], s["ts"] + s["dur"]) for s in steps]
        inside = lambda e: any(a <= e["ts"] and e["ts"] + e["dur"] <= b for a, b in windows)
        ops = [e for e in events if e.get("cat") == "cpu_op" and e["tid"] == thread and inside(e)]
        # Self time: an operator's duration less its direct children's, found by nesting (a child
        # starts and ends inside its parent on the same thread).
        ops.sort(key=lambda e: (e["ts"], -e["dur"]))
        self_time = {id(e): float(e["dur"]) for e in ops}
        stack, top_level = [], []
        for e in ops:
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
                stack.pop()
            if stack:
                self_time[id(stack[-1])] -= e["dur"]
            else:
                top_level.append(e)
            stack.append(e)
        for e in ops:
            per_family[family(e["name"])] += max(self_time[id(e)], 0.0)
        per_family["host outside operators"] = sum(b - a for a, b in windows) - sum(e["dur"] for e in top_level)
    n = len(steps)
    return {k: v / n for k, v in per_family.items()}, n, bool(device)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+", metavar="NAME=TRACE")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = ap.parse_args()
    columns = {}
    for arg in args.traces:
        name, _, path = arg.rpartition("=")
        columns[name or path] = summarise(path)
    order = [f for f, _ in FAMILIES] + ["idle", "host outside operators"]
    if args.json:
        print(json.dumps({n: {"steps": s, "device": d, "us_per_step": fam} for n, (fam, s, d) in columns.items()}))
        return
    kinds = {"device kernels" if d else "host operators (self time)" for _, _, d in columns.values()}
    print(f"time per step by family ({', '.join(sorted(kinds))}); ms and share of the column's total")
    print(f"{'family':28}" + "".join(f"{n:>24}" for n in columns))
    totals = {n: sum(fam.values()) for n, (fam, _, _) in columns.items()}
    for f in order:
        if not any(fam.get(f) for fam, _, _ in columns.values()):
            continue
        cells = []
        for n, (fam, _, _) in columns.items():
            v = fam.get(f, 0.0)
            cells.append(f"{v / 1e3:13.2f} ({100 * v / totals[n]:5.1f}%)" if totals[n] else f"{'-':>21}")
        print(f"{f:28}" + "".join(f"{c:>24}" for c in cells))
    print(f"{'total':28}" + "".join(f"{totals[n] / 1e3:13.2f} ms{'':6}" for n in columns))
    print(f"{'steps profiled':28}" + "".join(f"{s:>24}" for _, s, _ in columns.values()))


if __name__ == "__main__":
    sys.exit(main())
