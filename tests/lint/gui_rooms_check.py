#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GUI's rooms keep to their floors (app/gui/CMakeLists.txt): for every folder of app/gui,
a file compiled with that folder's own flags (compile_commands.json) can include a header of
every floor below it, and cannot include one of its own floor's neighbours or of a floor above.
Each include is preprocessed (-E): enough to know whether the header is on the include path.

Usage: gui_rooms_check.py SOURCE_DIR BUILD_DIR
"""
import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from guirooms import FLOORS, folders  # noqa: E402


def command_for(entries, folder):
    """The compile command of one of `folder`'s own .cpp files, as a list, without its output."""
    for e in entries:
        if f"/app/gui/{folder}/" in e["file"] and e["file"].endswith(".cpp"):
            argv = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
            while argv and Path(argv[0]).name == "ccache":
                argv = argv[1:]
            # Without the precompiled header's forced include (GCC's `-include H`, clang's
            # `-Xclang -include -Xclang H` and `-Xclang -include-pch -Xclang H.pch`): the probe
            # needs the include path only, and preprocessing all of Qt for each of the ~90 probes
            # took most of this check's 23 s.
            out, skip = [], 0
            for i, a in enumerate(argv):
                if skip:
                    skip -= 1
                elif a in ("-o", "-c", "-MF", "-MT", "-MQ", "-include"):
                    skip = 1
                elif a == "-Xclang" and i + 1 < len(argv) and argv[i + 1] in ("-include", "-include-pch"):
                    skip = 3
                elif a in ("-MD", "-MMD", "-Winvalid-pch") or a == e["file"]:
                    pass
                else:
                    out.append(a)
            return out, e["directory"]
    return None, None


def preprocesses(argv, cwd, header):
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
        f.write(f'#include "{header}"\n')
        probe = f.name
    try:
        r = subprocess.run(argv + ["-E", "-o", "/dev/null", probe], cwd=cwd, capture_output=True, text=True)
    finally:
        Path(probe).unlink()
    return r.returncode == 0, r.stderr


def main():
    source, build = Path(sys.argv[1]), Path(sys.argv[2])
    entries = json.loads((build / "compile_commands.json").read_text())
    gui = source / "app" / "gui"
    found = folders(gui)
    problems, checked = [], 0
    for folder, level in FLOORS.items():
        argv, cwd = command_for(entries, folder)
        if argv is None:
            problems.append(f"{folder}: no compile command (is it in app/gui/CMakeLists.txt?)")
            continue
        for other, other_level in FLOORS.items():
            if other == folder or not found.get(other):
                continue
            header = found[other][0]
            ok, err = preprocesses(argv, cwd, header)
            checked += 1
            allowed = other_level < level
            if allowed and not ok:
                problems.append(f"{folder} cannot include {other}/{header}, a floor below it:\n{err.strip()}")
            elif not allowed and ok:
                problems.append(f"{folder} can include {other}/{header} ({'sideways' if other_level == level else 'upwards'})")
    for p in problems:
        print("FAIL:", p)
    print(f"{checked} includes checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
