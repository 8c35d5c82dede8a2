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

Goodput (`orrery runs goodput`): the time from the process's start to the first log() is start-up,
then training, except what you mark:

    with run.phase("checkpoint"):     # or "eval", "sample", "other"
        save(...)
    run.checkpointed(step)            # the step a resume would restart from
    run.resumed_from(step)            # after loading a checkpoint: the steps redone count as lost

Only rank 0 writes (RANK, SLURM_PROCID or LOCAL_RANK say which); on the others every call does
nothing, so the same script runs under srun or torchrun unchanged. Each line is written and
flushed whole, so a reader never sees half a line. A full disk loses nothing: lines the disk
refuses wait in memory, in order, and go out with the next once there is room; a line an earlier
process left cut off is ended first, so it stays one bad line a reader skips. NaN and infinities are written as "nan",
"inf" and "-inf" (JSON has no words for them; Orrery also reads Python's bare NaN/Infinity).

Copy this file next to your script, or put Orrery's share/orrery/python on PYTHONPATH.
"""

import contextlib
import errno
import json
import math
import os
import threading
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


def _process_start():
    """This process's start in unix seconds (/proc: before the interpreter loaded anything)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        start = time.time() - uptime + ticks / os.sysconf("SC_CLK_TCK")
        if 0 < start <= time.time():
            return start
    except (OSError, ValueError, IndexError):
        pass
    return time.time()


_PHASES = ("startup", "train", "checkpoint", "eval", "sample", "other")


class Run:
    """Appends events to <run dir>/events.jsonl; the run dir is ORRERY_RUN_DIR, else `run_dir`."""

    def __init__(self, run_dir=None, flush_seconds=0.0):
        """flush_seconds > 0: lines are flushed by a background thread at most that long after
        they are written, instead of one by one (Orrery's W&B capture: a write per step then
        costs a few microseconds); a reader may then see part of the last line, which Orrery reads
        again with the rest later. finish() and close() flush what is left."""
        self.run_dir = os.environ.get("ORRERY_RUN_DIR") or run_dir or "run"
        self.resumed = os.environ.get("ORRERY_RESUME") == "1"
        self._file = None  # the descriptor, rank 0 only
        self._pending = bytearray()  # whole lines not written yet (flush_seconds, a full disk)
        self._flush_seconds = float(flush_seconds)
        self._lock = threading.Lock()
        # Phase timings (the trainer's `phases` events): cumulative seconds per phase since the
        # process started, on the monotonic clock; every second is in exactly one phase.
        self._process_start = _process_start()
        self._done = dict.fromkeys(_PHASES, 0.0)
        self._done["startup"] = max(0.0, time.time() - self._process_start)
        self._current, self._since = "startup", time.monotonic()
        self._last_step, self._resume_step, self._checkpoint_step = 0, 0, 0
        if _rank() == 0:
            os.makedirs(self.run_dir, exist_ok=True)
            self._file = os.open(os.path.join(self.run_dir, "events.jsonl"),
                                 os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0), 0o644)
            size = os.lseek(self._file, 0, os.SEEK_END)
            if size > 0 and os.pread(self._file, 1, size - 1) != b"\n":
                self._pending = bytearray(b"\n")  # an earlier process was cut off mid-line
            if self._flush_seconds > 0:
                threading.Thread(target=self._flusher, name="orrery-events-flush", daemon=True).start()

    def _write(self, kind, _time=None, **fields):
        if self._file is None:
            return
        event = {"v": 1, "t": time.time() if _time is None else _time, "kind": kind}
        event.update(fields)
        line = json.dumps(event, allow_nan=False, separators=(",", ":")) + "\n"
        with self._lock:
            if self._file is None:
                return
            self._pending += line.encode("utf-8")
            if self._flush_seconds <= 0:
                self._drain()

    def _drain(self):
        # Under the lock. A short write leaves the rest to follow it directly; a full disk
        # (ENOSPC, EDQUOT) keeps it for the next line or flush.
        while self._pending:
            try:
                n = os.write(self._file, self._pending)
            except InterruptedError:
                continue
            except OSError as e:
                if e.errno in (errno.ENOSPC, errno.EDQUOT):
                    return
                raise
            del self._pending[:n]

    def _flusher(self):
        wake = threading.Event()
        while True:
            wake.wait(self._flush_seconds)
            self.flush()
            if self._file is None:
                return

    def flush(self):
        """Makes every line written so far readable (with flush_seconds > 0)."""
        with self._lock:
            if self._file is not None:
                self._drain()

    def close(self):
        """Flushes and closes events.jsonl (finish() does it too)."""
        with self._lock:
            if self._file is not None:
                try:
                    self._drain()
                finally:
                    os.close(self._file)
                    self._file = None

    def start(self, params=None, **info):
        """The run's params (a flat or nested dict) and anything else about it (device, world_size)."""
        run = dict(info)
        if params:
            run["params"] = params
        self._write("start", run=run)

    def log(self, step, values, phases=True, t=None):
        """Metric values at a training step: {"train/loss": 0.12}. The first call ends start-up.
        phases=False leaves out the phase timings' line (write them now and then, not each step);
        t: when the values were logged (unix s), if not now."""
        if self._current == "startup":
            self._enter("train")
        self._last_step = int(step)
        # A finite float as it is (v - v is 0 only for those; the common case, kept cheap).
        values = {k: v if type(v) is float and v - v == 0 else _number(v) for k, v in values.items()}
        self._write("metrics", _time=t, step=int(step), values=values)
        if phases:
            self._write_phases()

    def _enter(self, phase):
        now = time.monotonic()
        self._done[self._current] += now - self._since
        self._current, self._since = phase, now

    def _write_phases(self):
        seconds = dict(self._done)
        seconds[self._current] += time.monotonic() - self._since
        values = {"process_start": self._process_start, "resume_step": self._resume_step,
                  "checkpoint_step": self._checkpoint_step}
        values.update({name + "_s": seconds[name] for name in _PHASES})
        self._write("phases", step=self._last_step, values=values)

    @contextlib.contextmanager
    def phase(self, name):
        """Time spent in the block counts as `name` (checkpoint, eval, sample or other)."""
        if name not in _PHASES:
            raise ValueError(f"phase {name!r}: one of {', '.join(_PHASES)}")
        before = self._current
        self._enter(name)
        try:
            yield
        finally:
            self._enter(before if before != "startup" else "train")

    def checkpointed(self, step):
        """A checkpoint at `step` was written: a resume restarts there."""
        self._checkpoint_step = int(step)
        self._write_phases()

    def resumed_from(self, step):
        """This process loaded a checkpoint of `step`: steps an earlier one ran past it are redone."""
        self._resume_step = self._checkpoint_step = self._last_step = int(step)

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
        if self._current == "startup":
            self._enter("train")
        if step is not None:
            self._last_step = int(step)
        self._enter("other")
        self._write_phases()
        self.status(state, reason)
        if self._file is None:
            return
        self.flush()
        verdict = {"state": state, "reason": reason, "t": time.time()}
        if step is not None:
            verdict["step"] = int(step)
        path = os.path.join(self.run_dir, "exit.json")
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(verdict, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(path + ".tmp", path)
        self.close()
