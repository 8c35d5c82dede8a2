# SPDX-License-Identifier: GPL-3.0-or-later
"""Orrery's capture of W&B and MLflow calls, loaded by Python at start-up (docs/sweeps.md "W&B calls,
captured" and "MLflow calls, captured").

Orrery puts this directory first on a command trial's PYTHONPATH (unless the spec says
`capture: false`), so Python imports this file as `sitecustomize` when it starts. It does two
things and nothing else:

* runs the `sitecustomize` it hides, the next one on sys.path (Debian's, a conda env's, yours),
  so the program starts exactly as it would without Orrery;
* when ORRERY_CAPTURE=1, installs orrery_capture's import hook: nothing more happens unless the
  program imports `wandb` or `mlflow` (the hook then wraps a few of their functions; see
  orrery_capture.py and orrery_mlflow.py).

Nothing here may stop the program: every failure is one line on standard error.
"""

import os
import sys


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        import importlib.machinery
        import importlib.util

        rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
        if spec is None or spec.loader is None or not spec.origin:
            return
        if os.path.abspath(spec.origin) == os.path.abspath(__file__):
            return
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - the other sitecustomize's failure is reported, as Python would
        sys.stderr.write(f"orrery capture: the sitecustomize after Orrery's failed: {e!r}\n")


_chain()

if os.environ.get("ORRERY_CAPTURE") == "1":
    try:
        import orrery_capture

        orrery_capture.install()
    except Exception as e:  # noqa: BLE001
        sys.stderr.write(f"orrery capture: not installed ({e!r}); W&B is unaffected\n")
