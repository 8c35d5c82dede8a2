# SPDX-License-Identifier: GPL-3.0-or-later
"""Records what a program logs through W&B (and, with orrery_mlflow, MLflow) into Orrery's
events.jsonl, live, with W&B and MLflow untouched.

Installed by Orrery's sitecustomize (same directory) for command trials. install() puts import
hooks on sys.meta_path; when the program imports `wandb` (or `mlflow`: orrery_mlflow.py says what
is wrapped there), the real package is loaded as usual and then a few of its functions are wrapped. Each wrapper first calls W&B's own function (so W&B does
what the user configured: online, offline or disabled, and its errors reach the program as they
would), then records a copy through orrery_events.Run (rank 0 only):

  wandb.init(...)               a `start` event with the run's config as params
  run.log / wandb.log           `metrics` events, one per history row, at W&B's step: `step=`
                                is used as given, else W&B's own counter (_step), which each call
                                advances unless `commit=False` or a `step` was given; a row is
                                written when W&B commits it (the step moves on, commit=True,
                                finish), so values logged with commit=False join their row; a
                                step lower than the current one is dropped, as W&B drops it.
                                Nested dicts become "a/b" names. Numbers (int, float, bool, numpy
                                and 0-d torch values) are kept; wandb.Video and wandb.Image become
                                `artifact` events (the media file W&B wrote, copied into the run
                                dir's media/); other values (tables, histograms, text)
                                are counted and reported in one warning at the end.
  run.summary[...] = v, .update the values, as metrics at the last row's step
  wandb.config.update / [k] = v params set after init, in another `start` event
  run.finish / wandb.finish     the last row and a `status` event

Nothing here may break the program: each failure is caught and said once on standard error, and
from then on that part records nothing.
"""

import atexit
import functools
import importlib.abc
import os
import shutil
import sys
import threading
import time
import weakref

__all__ = ["install"]

_lock = threading.RLock()
_said = set()
_local = threading.local()


def _say_once(key, message):
    if key in _said:
        return
    _said.add(key)
    try:
        sys.stderr.write(f"orrery capture: {message}\n")
    except Exception:  # noqa: BLE001
        pass


def _library(what):
    return "MLflow" if what.startswith("mlflow") else "W&B"


def _guarded(what):
    """Runs the recording part; a failure is said once and never reaches the program."""

    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception as e:  # noqa: BLE001
                _say_once(what, f"recording {what} failed ({e!r}); {_library(what)} is unaffected, "
                          "Orrery misses it")
                return None

        return inner

    return wrap


_shared = []  # the process's one orrery_events.Run, made on first use


def shared_events():
    """The process's events.jsonl writer, shared by every W&B run and the MLflow capture: one
    buffered file, so lines from both never interleave mid-line. Lines are flushed by a background
    thread every 0.5 s, and at the end of the program."""
    with _lock:
        if not _shared:
            import orrery_events

            _shared.append(orrery_events.Run(flush_seconds=_WRITE_SECONDS))
        return _shared[0]


class _Recorder:
    """W&B's step state, one per W&B run, writing through the shared events.jsonl writer."""

    def __init__(self):
        # Rows wait in `queue` (with the time they were logged) and the writer thread writes and
        # flushes them every 0.5 s: the training thread only appends (bench/RESULTS.md), and the
        # encoding runs while torch, which releases the GIL, computes. Orrery's follow tick is no
        # faster than that anyway.
        self.events = shared_events()
        self.queue = []
        self.phases_at = 0.0  # when the phase timings (goodput) were last written
        _start_writer()
        self.step = 0  # W&B's _step: the row the next log() without step= goes to
        self.last = 0  # the last row anything was logged to (where summary values go)
        self.row = {}  # values of the row at self.step not yet committed
        self.params = {}
        self.ignored = {}  # type name -> [count, first key]
        self.media = 0

    def commit(self):
        if self.row:
            self.queue.append((time.time(), self.step, self.row))
            self.row = {}

    def drain(self):
        """Writes the queued rows (under _lock; before any other event, which must follow them)."""
        if not self.queue:
            return
        rows, self.queue = self.queue, []
        for i, (t, step, row) in enumerate(rows):
            self.events.log(step, row, phases=i == len(rows) - 1, t=t)  # goodput's timings: once

    def ignore(self, key, value):
        name = type(value).__module__.split(".")[0] + "." + type(value).__name__
        entry = self.ignored.setdefault(name, [0, key])
        entry[0] += 1

    def report_ignored(self):
        if not self.ignored:
            return
        self.drain()
        parts = [f"{n} x {t} (e.g. {k!r})" for t, (n, k) in sorted(self.ignored.items())]
        message = ("W&B values Orrery does not chart were skipped (only numbers, videos and "
                   "images are kept): " + ", ".join(parts))
        self.events.warning(message)
        _say_once("ignored", message)
        self.ignored = {}


_WRITE_SECONDS = 0.5
_writer = []  # the writer thread, once started


def _write_all():
    with _lock:
        for rec in list(_recorders.values()) + ([_current[0]] if _current[0] else []):
            rec.drain()
            rec.events.flush()


def _writer_loop():
    wake = threading.Event()
    while True:
        wake.wait(_WRITE_SECONDS)
        try:
            _write_all()
        except Exception as e:  # noqa: BLE001
            _say_once("writer", f"writing events.jsonl failed ({e!r}); W&B is unaffected, Orrery misses it")
            return


def _start_writer():
    if not _writer:
        _writer.append(threading.Thread(target=_writer_loop, name="orrery-capture", daemon=True))
        _writer[0].start()


_recorders = weakref.WeakKeyDictionary()  # a W&B run -> its _Recorder
_current = [None]  # the recorder of the last run: wandb.log before a run object is known


_last = [None, None]  # the run of the last call and its recorder: most calls skip the lookup


def _recorder(run, create=True):
    if run is _last[0] and run is not None:
        return _last[1]
    try:
        rec = _recorders.get(run)
    except TypeError:
        rec = None
    if rec is not None:
        _last[0], _last[1] = run, rec
    if rec is None and create:
        rec = _Recorder()
        try:
            _recorders[run] = rec
        except TypeError:
            pass
        _current[0] = rec
        _last[0], _last[1] = run, rec
    return rec


def _number(value):
    """The value as a float, or None when it is not one number."""
    if isinstance(value, (bool, int, float)):
        return float(value)
    if isinstance(value, (str, bytes, dict, list, tuple)):
        return None
    shape = getattr(value, "shape", None)
    if shape is not None and tuple(shape) not in ((), (1,)):
        return None  # an array or tensor: W&B makes a histogram of it
    if hasattr(value, "__float__"):
        try:
            return float(value)
        except (TypeError, ValueError):
            return None
    return None


def _flatten(data, prefix=""):
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _flatten(value, name + "/")
        else:
            yield name, value


def _media_kind(value):
    wandb = sys.modules.get("wandb")
    if wandb is None:
        return None
    for kind, cls in (("video", "Video"), ("image", "Image")):
        t = getattr(wandb, cls, None)
        if isinstance(t, type) and isinstance(value, t):
            return kind
    return None


def _safe_name(name):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:100] or "media"


def _place_media(rec, key, value, kind, step):
    """Copies the file W&B was given or wrote for a Video/Image into <run dir>/media/."""
    source = getattr(value, "_path", None)
    if not source or not os.path.isfile(source):
        rec.ignore(key, value)  # W&B made no file of it (e.g. an encoder missing)
        return
    ext = os.path.splitext(source)[1] or (".mp4" if kind == "video" else ".png")
    rec.media += 1
    rec.drain()
    relative = os.path.join("media", f"{_safe_name(key)}-step-{step}-{rec.media}{ext}")
    target = os.path.join(rec.events.run_dir, relative)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    # A copy, never a hard link: a script that writes the same file again (one sample.mp4 each
    # epoch) rewrites its inode, which would change every earlier sample.
    shutil.copyfile(source, target)
    rec.events.artifact(relative, step=step, kind=kind)


def _add_values(rec, data, prefix):
    """Puts the numbers of `data` into the row (nested dicts as "a/b"); media become artifacts,
    anything else is counted. The common case, a float or int, takes the first branch."""
    row = rec.row
    for key, value in data.items():
        t = type(value)
        if t is float or t is int:
            row[prefix + key if prefix else key] = value
        elif t is dict:
            _add_values(rec, value, f"{prefix}{key}/")
        elif isinstance(key, str):
            name = prefix + key if prefix else key
            number = _number(value)
            if number is not None:
                row[name] = number
                continue
            kind = _media_kind(value)
            if kind:
                _place_media(rec, name, value, kind, rec.step)
            else:
                rec.ignore(name, value)


@_guarded("wandb.log")
def _record_log(run, data, step, commit):
    with _lock:
        rec = _recorder(run)
        if step is not None:
            step = int(step)
            if step < rec.step:
                return  # W&B drops it: "less than the current step"
            if step > rec.step:
                rec.commit()
                rec.step = step
        if data:
            rec.last = rec.step
            _add_values(rec, data, "")
        if (step is None and commit is None) or commit:
            rec.commit()
            rec.step += 1


def _plain(value):
    """A config value as JSON can say it (params are text in Orrery's store)."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    number = _number(value)
    return number if number is not None else str(value)


@_guarded("wandb.config")
def _record_config(run, config):
    with _lock:
        rec = _recorder(run)
        items = dict(config.as_dict() if hasattr(config, "as_dict") else config)
        new = {str(k): _plain(v) for k, v in items.items()
               if not str(k).startswith("_") and str(k) not in rec.params}
        if new:
            rec.params.update(new)
            rec.drain()
            rec.events.start(new)


@_guarded("wandb.summary")
def _record_summary(values):
    with _lock:
        rec = _current[0]
        if rec is None:
            return
        row = {}
        for key, value in _flatten(dict(values)):
            number = _number(value)
            if number is not None:
                row[key] = number
            else:
                rec.ignore(key, value)
        if row:
            rec.drain()
            rec.events.log(rec.last, row)


@_guarded("wandb.finish")
def _record_finish(run, exit_code):
    with _lock:
        rec = _recorder(run, create=False)
        if rec is None:
            return
        if run is not None and getattr(run, "config", None) is not None:
            _record_config(run, run.config)
        rec.commit()
        rec.drain()
        rec.report_ignored()
        rec.events._write_phases()  # goodput's last timings (orrery_events writes them)
        failed = exit_code not in (None, 0)
        rec.events.status("failed" if failed else "completed",
                          f"wandb.finish(exit_code={exit_code})" if failed else "wandb.finish()")
        rec.events.flush()


@_guarded("the end of the program")
def _at_exit():
    with _lock:
        for rec in list(_recorders.values()) + ([_current[0]] if _current[0] else []):
            rec.commit()
            rec.drain()
            rec.report_ignored()
            rec.events.flush()
        if _shared:
            _shared[0].flush()


@_guarded("wandb.init")
def _start_run(run):
    with _lock:
        rec = _recorder(run)
        # A resumed W&B run (resume="allow", as a retried trial's may be) goes on from its last
        # step: W&B's own counter starts there (Run._local_step, which `run.step` would ask the
        # service for).
        rec.step = rec.last = int(getattr(run, "_local_step", 0) or 0)
    _record_config(run, getattr(run, "config", {}) or {})


def _wrap_init(real_init):
    @functools.wraps(real_init)
    def init(*args, **kwargs):
        run = real_init(*args, **kwargs)
        if run is not None:
            _start_run(run)
        return run

    return init


def _wrap_log(real_log):
    @functools.wraps(real_log)
    def log(self, data, step=None, commit=None, *args, **kwargs):
        # Recorded before W&B's own call: right after it, W&B's threads are busy with the record
        # just published and would hold the GIL against this (measured: 3x slower after than
        # before; bench/RESULTS.md). Only what W&B would accept is recorded (a dict, text keys).
        if isinstance(data, dict):  # W&B refuses anything else (and keys that are not text)
            _record_log(self, data, step, commit)
        _local.in_log = True
        try:
            return real_log(self, data, step, commit, *args, **kwargs)
        finally:
            _local.in_log = False

    return log


def _wrap_finish(real_finish):
    @functools.wraps(real_finish)
    def finish(self, exit_code=None, *args, **kwargs):
        _record_finish(self, exit_code)
        return real_finish(self, exit_code, *args, **kwargs)

    return finish


def _wrap_summary_update(real_update):
    @functools.wraps(real_update)
    def update(self, d=None, *args, **kwargs):
        result = real_update(self, d, *args, **kwargs) if d is not None else real_update(self, *args, **kwargs)
        if not getattr(_local, "in_log", False) and isinstance(d, dict):
            _record_summary(d)
        return result

    return update


def _wrap_summary_setitem(real_setitem):
    @functools.wraps(real_setitem)
    def setitem(self, key, value):
        real_setitem(self, key, value)
        if not getattr(_local, "in_log", False):
            _record_summary({key: value})

    return setitem


def _wrap_config(real):
    @functools.wraps(real)
    def method(self, *args, **kwargs):
        result = real(self, *args, **kwargs)
        # Only the config of a run already recorded (wandb.init records its own at the end).
        run = getattr(sys.modules.get("wandb"), "run", None)
        if run is not None and getattr(run, "config", None) is self and _recorder(run, create=False):
            _record_config(run, self)
        return result

    return method


def _patch(wandb):
    """Wraps W&B's functions once `import wandb` has run."""
    from wandb.sdk import wandb_config, wandb_run, wandb_summary

    classes = [wandb_run.Run]
    try:
        from wandb.sdk.lib import noop_run  # mode=disabled

        classes.append(noop_run.NoopRun)
    except Exception:  # noqa: BLE001 - an older W&B has none
        noop_run = None
    for cls in classes:
        if "log" in vars(cls):
            cls.log = _wrap_log(vars(cls)["log"])
        if "finish" in vars(cls):
            cls.finish = _wrap_finish(vars(cls)["finish"])
    wandb_summary.SummaryDict.update = _wrap_summary_update(wandb_summary.SummaryDict.update)
    try:
        from wandb.sdk.lib import disabled

        disabled.SummaryDisabled.__setitem__ = _wrap_summary_setitem(dict.__setitem__)
        disabled.SummaryDisabled.__setattr__ = disabled.SummaryDisabled.__setitem__
        disabled.SummaryDisabled.update = _wrap_summary_update(dict.update)
    except Exception:  # noqa: BLE001
        pass
    for name in ("update", "__setitem__", "__setattr__"):
        real = getattr(wandb_config.Config, name, None)
        if real is not None:
            setattr(wandb_config.Config, name, _wrap_config(real))
    wandb.init = _wrap_init(wandb.init)
    if getattr(wandb, "sdk", None) is not None and hasattr(wandb.sdk, "init"):
        wandb.sdk.init = wandb.init
    atexit.register(_at_exit)


def _patch_mlflow(mlflow):
    import orrery_mlflow

    orrery_mlflow.patch(mlflow)
    atexit.register(_at_exit)


# The packages followed, each with what patches it once its `import` has run.
_PATCHES = {"wandb": (_patch, "W&B"), "mlflow": (_patch_mlflow, "MLflow")}


class _ImportHook(importlib.abc.MetaPathFinder):
    """Lets `import wandb` (or mlflow) load the real package, then patches it (once)."""

    def __init__(self, name):
        self.name = name

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        spec = None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        real_exec = spec.loader.exec_module

        def exec_module(module):
            real_exec(module)
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
            patch, label = _PATCHES[self.name]
            try:
                patch(module)
            except Exception as e:  # noqa: BLE001
                _say_once("patch " + self.name,
                          f"cannot follow this {label} version ({e!r}); {label} is unaffected")

        spec.loader.exec_module = exec_module  # this spec's own loader instance
        return spec


def install():
    if not os.environ.get("ORRERY_RUN_DIR") and not os.environ.get("ORRERY_EVENTS"):
        return
    for name, (patch, label) in _PATCHES.items():
        if name in sys.modules:
            try:
                patch(sys.modules[name])
            except Exception as e:  # noqa: BLE001
                _say_once("patch " + name, f"cannot follow this {label} version ({e!r}); {label} is unaffected")
        else:
            sys.meta_path.insert(0, _ImportHook(name))


# What orrery_mlflow shares with this module.
lock = _lock
guarded = _guarded
say_once = _say_once
number = _number
plain = _plain
