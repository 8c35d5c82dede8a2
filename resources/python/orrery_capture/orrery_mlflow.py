# SPDX-License-Identifier: GPL-3.0-or-later
"""Records what a program logs through MLflow into Orrery's events.jsonl, with MLflow untouched.

Installed by orrery_capture's import hook when the program imports `mlflow` (docs/sweeps.md
"MLflow calls, captured"). Every way a script logs to MLflow goes through a few methods of
`mlflow.tracking.MlflowClient`: the fluent API (`mlflow.log_metric`, `log_metrics`, `log_param(s)`,
`set_tag(s)`, `log_artifact(s)`, `log_dict`, `log_text`, `log_figure`, `log_image`, `end_run`)
calls them, and so do the integrations built on it (accelerate's `log_with="mlflow"`, HF
`report_to="mlflow"`, Lightning's `MLFlowLogger`). Those methods are wrapped; each wrapper
records a copy first (the file a TemporaryDirectory is about to remove is copied now), then calls
MLflow's own method, whose result and errors reach the program as they would:

  log_metric, log_batch(metrics=)  `metrics` events at MLflow's step (0 when none is given, as
                                   MLflow stores it) and its timestamp
  log_param, log_batch(params=)    a `start` event with the params
  set_tag, log_batch(tags=)        a `tags` event (MLflow's own mlflow.* tags are left out)
  log_artifact(s), and what is     videos (gif, mp4, webm, ...) and images (png, jpg, webp) are
  built on it (log_dict, log_text, copied into <run dir>/mlflow/<artifact path>/ as a
  log_figure, log_image)           `video`/`image` artifact at the step in the file name (log_image's
                                   `+step+N+`, or step-N / step_N / stepN) or the last step logged;
                                   other files up to 1 MiB (a config from log_dict) as `file`
  set_terminated (end_run)         a `status` event: FINISHED completed, FAILED or KILLED failed,
                                   for the run the trial's metrics went to (not a nested one)

Nothing here may break the program or an MLflow call: each recording runs under orrery_capture's
guard (a failure is one line on standard error, once).
"""

import os
import re
import shutil
import threading

import orrery_capture as _capture

_VIDEO = {".gif", ".mp4", ".webm", ".mkv", ".mov", ".avi", ".y4m"}
_IMAGE = {".png", ".jpg", ".jpeg", ".webp"}
_SMALL_FILE = 1 << 20  # other artifacts are copied up to this size (a config, a report)
_STEP_IN_NAME = (re.compile(r"\+step\+(\d+)\+"), re.compile(r"(?:global_)?step[-_=]?(\d+)", re.IGNORECASE))

# last_step: where a sample without a step in its name goes; run: the MLflow run the trial's metrics
# go to (the first one logged to), whose end is the trial's.
_state = {"last_step": None, "files": 0, "run": None}
_local = threading.local()


def _events():
    return _capture.shared_events()


def _step_of(name):
    for pattern in _STEP_IN_NAME:
        m = pattern.search(name)
        if m:
            return int(m.group(1))
    return _state["last_step"]


def _safe_part(part):
    return "".join(c if c.isalnum() or c in "-_.+" else "_" for c in part)[:120] or "artifact"


@_capture.guarded("mlflow metrics")
def _record_metrics(metrics, run_id=None):
    """metrics: (key, value, timestamp ms or None, step or None) tuples, as MLflow got them."""
    if _state["run"] is None and run_id is not None:
        _state["run"] = run_id
    by_row = {}
    for key, value, timestamp, step in metrics:
        number = _capture.number(value)
        if number is None:
            continue
        step = int(step or 0)
        t = timestamp / 1000.0 if timestamp else None
        by_row.setdefault((step, t), {})[str(key)] = number
    if not by_row:
        return
    with _capture.lock:
        events = _events()
        for (step, t), values in sorted(by_row.items(), key=lambda item: item[0][0]):
            events.log(step, values, phases=False, t=t)
            if _state["last_step"] is None or step >= _state["last_step"]:
                _state["last_step"] = step


@_capture.guarded("mlflow params")
def _record_params(params):
    new = {str(k): _capture.plain(v) for k, v in params}
    if new:
        with _capture.lock:
            _events().start(new)


@_capture.guarded("mlflow tags")
def _record_tags(tags):
    values = {str(k): str(v) for k, v in tags if not str(k).startswith("mlflow.")}
    if values:
        with _capture.lock:
            _events()._write("tags", tags=values)


@_capture.guarded("mlflow artifacts")
def _record_file(local_path, artifact_path, step=None):
    with _capture.lock:  # the name chosen, the copy and its event, one thread at a time
        _record_file_locked(local_path, artifact_path, step)


def _record_file_locked(local_path, artifact_path, step):
    if not os.path.isfile(local_path):
        return
    name = os.path.basename(local_path)
    ext = os.path.splitext(name)[1].lower()
    if "+compressed" in name:  # log_image's second, smaller copy of the same image
        return
    kind = "video" if ext in _VIDEO else "image" if ext in _IMAGE else "file"
    if kind == "file" and os.path.getsize(local_path) > _SMALL_FILE:
        return
    events = _events()
    parts = [_safe_part(p) for p in (artifact_path or "").replace("\\", "/").split("/") if p not in ("", ".", "..")]
    relative = os.path.join("mlflow", *parts, _safe_part(name))
    target = os.path.join(events.run_dir, relative)
    if os.path.abspath(target) == os.path.abspath(local_path):
        return
    if os.path.exists(target):  # the same name again (a validation GIF each epoch): keep both
        _state["files"] += 1
        stem, suffix = os.path.splitext(relative)
        relative = f"{stem}-{_state['files']}{suffix}"
        target = os.path.join(events.run_dir, relative)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    # A copy, never a hard link: a script that saves the same file again (plt.savefig("pred.png")
    # each epoch) rewrites its inode, which would change every earlier sample.
    shutil.copyfile(local_path, target)
    events.artifact(relative, step=_step_of(name) if step is None else step, kind=kind)


@_capture.guarded("mlflow artifacts")
def _record_dir(local_dir, artifact_path):
    for root, _dirs, files in os.walk(local_dir):
        for f in sorted(files):
            sub = os.path.relpath(root, local_dir)
            path = artifact_path or ""
            if sub != ".":
                path = f"{path}/{sub}" if path else sub
            _record_file(os.path.join(root, f), path)


@_capture.guarded("mlflow images")
def _record_image(artifact_file, image):
    """log_image(key=, step=) without synchronous=True hands MLflow's writer a PIL image."""
    name = os.path.basename(str(artifact_file))
    if "+compressed" in name or not hasattr(image, "save"):
        return
    events = _events()
    relative = os.path.join("mlflow", "images", _safe_part(name))
    target = os.path.join(events.run_dir, relative)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    image.save(target)
    with _capture.lock:
        events.artifact(relative, step=_step_of(name), kind="image")


@_capture.guarded("mlflow end_run")
def _record_status(run_id, status):
    # The run the trial logs to ends, not a nested one or an old run a script cleans up.
    if _state["run"] is not None and run_id != _state["run"]:
        return
    status = str(status or "FINISHED").upper()
    state = "completed" if status == "FINISHED" else "failed" if status in ("FAILED", "KILLED") else None
    if state is None:
        return
    with _capture.lock:
        events = _events()
        events.status(state, f"mlflow run {status}")
        events.flush()


def _wrap(cls, name, record):
    real = vars(cls).get(name)
    if real is None:
        _capture.say_once(f"mlflow.{name}", f"this MLflow has no MlflowClient.{name}; Orrery misses what it logs")
        return

    def wrapper(self, *args, **kwargs):
        if not getattr(_local, "inside", False):  # a method calling another records once
            _local.inside = True
            try:
                record(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 - arguments MLflow itself will refuse
                _capture.say_once(f"mlflow.{name}", f"recording MlflowClient.{name} failed ({e!r}); "
                                  "MLflow is unaffected, Orrery misses it")
            finally:
                _local.inside = False
        return real(self, *args, **kwargs)

    wrapper.__name__ = real.__name__
    wrapper.__doc__ = real.__doc__
    wrapper.__wrapped__ = real
    setattr(cls, name, wrapper)


def _arg(args, kwargs, index, name, default=None):
    if name in kwargs:
        return kwargs[name]
    return args[index] if len(args) > index else default


def patch(mlflow):
    """Wraps MlflowClient's logging methods once `import mlflow` has run."""
    from mlflow.tracking import client as tracking_client

    cls = tracking_client.MlflowClient
    # Arguments after self: (run_id, ...), as MLflow 2.x and 3.x name them.
    _wrap(cls, "log_metric", lambda *a, **k: _record_metrics(
        [(_arg(a, k, 1, "key"), _arg(a, k, 2, "value"), _arg(a, k, 3, "timestamp"), _arg(a, k, 4, "step"))],
        _arg(a, k, 0, "run_id")))
    _wrap(cls, "log_batch", _log_batch)
    _wrap(cls, "log_param", lambda *a, **k: _record_params([(_arg(a, k, 1, "key"), _arg(a, k, 2, "value"))]))
    _wrap(cls, "set_tag", lambda *a, **k: _record_tags([(_arg(a, k, 1, "key"), _arg(a, k, 2, "value"))]))
    _wrap(cls, "log_artifact", lambda *a, **k: _record_file(
        os.fspath(_arg(a, k, 1, "local_path")), _arg(a, k, 2, "artifact_path")))
    _wrap(cls, "log_artifacts", lambda *a, **k: _record_dir(
        os.fspath(_arg(a, k, 1, "local_dir")), _arg(a, k, 2, "artifact_path")))
    _wrap(cls, "set_terminated", lambda *a, **k: _record_status(_arg(a, k, 0, "run_id"), _arg(a, k, 1, "status")))
    if "_log_artifact_async_helper" in vars(cls):
        real_async = vars(cls)["_log_artifact_async_helper"]

        def async_helper(self, run_id, artifact_file, artifact):
            _record_image(artifact_file, artifact)
            return real_async(self, run_id, artifact_file, artifact)

        cls._log_artifact_async_helper = async_helper


def _log_batch(*args, **kwargs):
    run_id = _arg(args, kwargs, 0, "run_id")
    metrics = _arg(args, kwargs, 1, "metrics", ()) or ()
    params = _arg(args, kwargs, 2, "params", ()) or ()
    tags = _arg(args, kwargs, 3, "tags", ()) or ()
    if metrics:
        _record_metrics([(m.key, m.value, m.timestamp, m.step) for m in metrics], run_id)
    if params:
        _record_params([(p.key, p.value) for p in params])
    if tags:
        _record_tags([(t.key, t.value) for t in tags])

