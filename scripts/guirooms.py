# SPDX-License-Identifier: GPL-3.0-or-later
"""The GUI's floors (app/gui/CMakeLists.txt), shared by scripts/gen-gui-rooms (the picture in
docs/gui.md) and tests/lint/gui_rooms_check.py (an include against them does not compile).

A folder may include the headers of folders on lower floors, never of its own floor's neighbours
or of a floor above.
"""
import re
from pathlib import Path

FLOORS = {
    "base": 0,
    "store": 1,
    "links": 1,
    "runs": 2,
    "compare": 2,
    "video": 2,
    "cluster": 2,
    "launcher": 2,
    "logs": 2,
    "shell": 3,
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+\.h)"', re.M)


def folders(gui: Path):
    """Each floor's headers, sorted: {folder: [header, ...]}."""
    return {f: sorted(p.name for p in (gui / f).glob("*.h")) for f in FLOORS if (gui / f).is_dir()}


def arrows(gui: Path):
    """{(from, to): count}: how many of `from`'s files include a header of `to`."""
    owner = {h: f for f, hs in folders(gui).items() for h in hs}
    out = {}
    for f in FLOORS:
        for src in sorted((gui / f).glob("*.[ch]*")):
            for h in set(INCLUDE.findall(src.read_text())):
                to = owner.get(h)
                if to and to != f:
                    out[(f, to)] = out.get((f, to), 0) + 1
    return out
