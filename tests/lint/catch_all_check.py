#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fails on a `catch (...)` that swallows what it caught (docs/errors.md).

In core/, remote/ and app/ every `catch (...)` block must rethrow (`throw;`, after cleaning up)
or hand the exception on (`std::current_exception()`, to a promise or a worker's error slot):
a block that does neither hides a bug that is not a std::exception. The block's braces are
matched on the source with comments and literals blanked.

Usage: catch_all_check.py SOURCE_DIR
       catch_all_check.py --selftest
"""
import os
import re
import sys

DIRS = ("app", "core", "remote")
CATCH_ALL = re.compile(r"catch\s*\(\s*\.\.\.\s*\)\s*\{")
HANDED_ON = re.compile(r"\bthrow\s*;|current_exception\s*\(")


def strip(src):
    """Blanks comments and string/char literal contents, keeping offsets and newlines."""
    out, i, n = [], 0, len(src)
    while i < n:
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif src[i] in "\"'":
            q, j = src[i], i + 1
            while j < n and src[j] != q:
                j += 2 if src[j] == "\\" else 1
            out.append(q + " " * (min(j, n) - i - 1) + (q if j < n else ""))
            i = j + 1
        else:
            out.append(src[i])
            i += 1
    return "".join(out)


def problems(text, name):
    code = strip(text)
    found = []
    for m in CATCH_ALL.finditer(code):
        depth, j = 1, m.end()
        while j < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
        if not HANDED_ON.search(code[m.end():j]):
            line = code.count("\n", 0, m.start()) + 1
            found.append(f"{name}:{line}: catch (...) neither rethrows nor hands on current_exception()")
    return found


def selftest():
    good = "try { f(); } catch (...) { cleanup(); throw; }\n" \
           "try { g(); } catch (...) { p.setException(std::current_exception()); }\n"
    bad = "try { f(); } catch (...) {\n  // throw; in a comment does not count\n  log(\"throw;\");\n}\n"
    assert problems(good, "good") == [], problems(good, "good")
    assert problems(bad, "bad") == ["bad:1: catch (...) neither rethrows nor hands on current_exception()"]
    print("catch_all_check: selftest ok")
    return 0


def main(argv):
    if argv[1:] == ["--selftest"]:
        return selftest()
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root, found, files = argv[1], [], 0
    for top in DIRS:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in sorted(names):
                if n.endswith((".cpp", ".h")):
                    path = os.path.join(dirpath, n)
                    files += 1
                    with open(path, encoding="utf-8", errors="replace") as f:
                        found += problems(f.read(), os.path.relpath(path, root))
    for p in found:
        print(p)
    print(f"catch_all_check: {files} files, {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
