#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The real orrery-gui binary under Xvfb, on a database with a finished sweep.

A real local sweep (the micro workload, two trials) runs to the end through `orrery sweep
submit --watch`; then `orrery-gui --db ... --select SWEEP --screenshot FILE` starts on an X
server of its own (Xvfb), once on the Runs tab and once on Compare. The GUI prints what it shows
before it quits: the test compares that with `orrery runs list --json` and keeps the screenshots
(ORRERY_TEST_SCREENSHOTS) for people to look at.

Usage (CTest): gui_smoke.py ORRERY ORRERY_GUI
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def start_xvfb():
    for display in range(90, 130):
        if os.path.exists(f"/tmp/.X11-unix/X{display}") or os.path.exists(f"/tmp/.X{display}-lock"):
            continue
        proc = subprocess.Popen(["Xvfb", f":{display}", "-screen", "0", "1400x900x24", "-nolisten", "tcp"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if os.path.exists(f"/tmp/.X11-unix/X{display}"):
                return proc, f":{display}"
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        proc.kill()
    fail("could not start Xvfb")


def main():
    orrery, gui = sys.argv[1], sys.argv[2]
    source = os.environ["ORRERY_SOURCE_DIR"]
    shots = os.environ.get("ORRERY_TEST_SCREENSHOTS", "")
    work = tempfile.mkdtemp(prefix="orrery-gui-smoke-")
    env = dict(os.environ, ORRERY_DB=os.path.join(work, "orrery.sqlite"), HOME=work,
               XDG_DATA_HOME=os.path.join(work, "data"), XDG_CONFIG_HOME=os.path.join(work, "config"))
    spec = os.path.join(work, "smoke.yaml")
    with open(spec, "w") as f:
        f.write(f"""name: gui-smoke
experiment: smoke
trainer: {{config: {source}/tests/data/micro.yaml}}
method: grid
metric: {{name: train/loss, goal: minimize}}
parameters:
  optim.lr: {{values: [1e-3, 3e-3]}}
  train.steps: {{value: 30}}
max_concurrent: 2
""")
    for args in (["submit", spec], ["watch", "gui-smoke", "--pace", "0.5,1"]):
        sweep = subprocess.run([orrery, "sweep", *args], env=env, capture_output=True, text=True, timeout=240)
        if sweep.returncode != 0:
            fail(f"orrery sweep {args[0]} failed:\n{sweep.stdout}\n{sweep.stderr}")
    listed = subprocess.run([orrery, "runs", "list", "--json"], env=env, capture_output=True, text=True, timeout=60)
    runs = json.loads(listed.stdout)
    if len(runs) != 2:
        fail(f"expected 2 runs in the store, got {len(runs)}")

    xvfb, display = start_xvfb()
    try:
        for tab in ("runs", "compare"):
            png = os.path.join(work, f"gui-{tab}.png")
            shown = subprocess.run([gui, "--no-follow", "--select", "gui-smoke", "--tab", tab, "--screenshot", png],
                                   env=dict(env, DISPLAY=display, QT_QPA_PLATFORM="xcb"),
                                   capture_output=True, text=True, timeout=120)
            print(shown.stdout, end="")
            if shown.returncode != 0:
                fail(f"orrery-gui exited {shown.returncode}:\n{shown.stderr}")
            m = re.search(r"(\d+) runs, (\d+) selected, (\d+) sweeps shown", shown.stdout)
            if not m:
                fail(f"orrery-gui did not say what it showed:\n{shown.stdout}\n{shown.stderr}")
            if (int(m[1]), int(m[2]), int(m[3])) != (2, 2, 1):
                fail(f"orrery-gui showed {m[0]}, expected 2 runs, 2 selected, 1 sweep")
            # A window with content: a blank or black PNG of this size compresses to a few KiB.
            if os.path.getsize(png) < 40_000:
                fail(f"{png} is {os.path.getsize(png)} bytes: the window looks empty")
            if shots:
                os.makedirs(shots, exist_ok=True)
                shutil.copy(png, os.path.join(shots, os.path.basename(png)))
    finally:
        xvfb.kill()
        xvfb.wait()
    shutil.rmtree(work, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
