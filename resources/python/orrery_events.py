# SPDX-License-Identifier: GPL-3.0-or-later
"""Orrery's events.jsonl writer for your own training script, in one file with no dependencies.

Orrery sweeps any training command (docs/sweeps.md, "Any training command"). It reads metrics from
the program's standard output by regular expressions, or, with this module, from the run
directory's events.jsonl, the format its own trainer writes (docs/sweeps.md "events.jsonl"):

    from orrery_events import Run

    run = Run()                       # the run directory Orrery gives (ORRERY_RUN_DIR), else ./run
    run.start({"lr": args.lr})        # optional: the params and what the run is
    for step in range(steps):
        ...
        run.log(step, {"train/loss": loss, "train/lr": lr})
    run.artifact("samples/step-100.mp4", step=100, kind="video")
    run.finish()                      # or run.finish("failed", "diverged")

Only rank 0 writes (RANK, SLURM_PROCID or LOCAL_RANK say which); on the others every call does
nothing, so the same script runs under srun or torchrun unchanged. Each line is written and
flushed whole, so a reader never sees half a line. NaN and infinities are written as "nan",
"inf" and "-inf" (JSON has no words for them; Orrery also reads Python's bare NaN/Infinity).

Copy this file next to your script, or put Orrery's share/orrery/python on PYTHONPATH.
"""

import json
import math
import os
import time

__all__ = ["Run"]


def _rank():
    for name in ("RANK", "SLURM_PROCID", "LOCAL_RANK"):
        value = os.environ.get(name)
        if value is not None:
            try:
                return int(value)
            except ValueError:
                pass
    return 0


def _number(value):
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


class Run:
    """Appends events to <run dir>/events.jsonl; the run dir is ORRERY_RUN_DIR, else `run_dir`."""

    def __init__(self, run_dir=None):
        self.run_dir = os.environ.get("ORRERY_RUN_DIR") or run_dir or "run"
        self.resumed = os.environ.get("ORRERY_RESUME") == "1"
        self._file = None
        if _rank() == 0:
            os.makedirs(self.run_dir, exist_ok=True)
            self._file = open(os.path.join(self.run_dir, "events.jsonl"), "a", encoding="utf-8")

    def _write(self, kind, **fields):
        if self._file is None:
            return
        event = {"v": 1, "t": time.time(), "kind": kind}
        event.update(fields)
        self._file.write(json.dumps(event, allow_nan=False, separators=(",", ":")) + "\n")
        self._file.flush()

    def start(self, params=None, **info):
        """The run's params (a flat or nested dict) and anything else about it (device, world_size)."""
        run = dict(info)
        if params:
            run["params"] = params
        self._write("start", run=run)

    def log(self, step, values):
        """Metric values at a training step: {"train/loss": 0.12}."""
        self._write("metrics", step=int(step), values={k: _number(v) for k, v in values.items()})

    def system(self, values):
        """System samples (GPU utilisation, memory): they take the last step logged."""
        self._write("system", values={k: _number(v) for k, v in values.items()})

    def artifact(self, path, step=None, kind="file"):
        """A file of the run, relative to its run dir: kind "video" for samples the GUI plays."""
        fields = {"path": path, "type": kind}
        if step is not None:
            fields["step"] = int(step)
        self._write("artifact", **fields)

    def warning(self, message):
        self._write("warning", message=str(message))

    def status(self, state, message=""):
        """running, checkpointed, preempted, completed or failed."""
        self._write("status", state=state, message=str(message))

    def finish(self, state="completed", reason="", step=None):
        """Writes exit.json, Orrery's verdict on this attempt (else the exit status decides:
        0 completed, 75 preempted, anything else failed)."""
        self.status(state, reason)
        if self._file is None:
            return
        verdict = {"state": state, "reason": reason, "t": time.time()}
        if step is not None:
            verdict["step"] = int(step)
        path = os.path.join(self.run_dir, "exit.json")
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(verdict, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(path + ".tmp", path)
        self._file.close()
        self._file = None
