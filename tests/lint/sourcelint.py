# SPDX-License-Identifier: GPL-3.0-or-later
"""What the source lints share: C++ text with its comments and literals blanked, and a command line
that runs a lint's `problems(text, name)` over the tree's .cpp and .h files (or its selftest)."""
import os
import re
import sys


def strip(src):
    """Blanks comments and the contents of string and character literals; keeps every newline
    and every offset, so positions map back to lines."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in src[i:j]))
            i = j
        elif c == "R" and src.startswith('R"', i) and not (i and (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', src[i:])
            end = src.find(")" + m.group(1) + '"', i + m.end()) if m else -1
            if end < 0:
                out.append(c)
                i += 1
                continue
            j = end + len(m.group(1)) + 2
            out.append("R" + '"' + "".join(ch if ch == "\n" else "x" for ch in src[i + 2:j - 1]) + '"')
            i = j
        elif c == '"' or (c == "'" and not (i and src[i - 1].isalnum() and src[i + 1:i + 2].isalnum())):
            # A ' between two digits or letters is a digit separator (1'000), not a character literal.
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            out.append(c + "x" * (j - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def run(argv, doc, name, dirs, problems, selftest):
    """`NAME SOURCE_DIR`: every problem in `dirs` under SOURCE_DIR, a line each; exit 1 if any.
    `NAME --selftest`: the lint's own selftest."""
    if argv[1:] == ["--selftest"]:
        return selftest()
    if len(argv) != 2:
        print(doc, file=sys.stderr)
        return 2
    root, found, files = argv[1], [], 0
    for top in dirs:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in sorted(names):
                if n.endswith((".cpp", ".h")):
                    path = os.path.join(dirpath, n)
                    files += 1
                    with open(path, encoding="utf-8", errors="replace") as f:
                        found += problems(f.read(), os.path.relpath(path, root))
    for p in found:
        print(p)
    print(f"{name}: {files} files, {len(found)} problem(s)")
    return 1 if found else 0
