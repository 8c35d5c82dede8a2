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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sourcelint import run, strip  # noqa: E402

DIRS = ("app", "core", "remote")
CATCH_ALL = re.compile(r"catch\s*\(\s*\.\.\.\s*\)\s*\{")
HANDED_ON = re.compile(r"\bthrow\s*;|current_exception\s*\(")


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


if __name__ == "__main__":
    sys.exit(run(sys.argv, __doc__, "catch_all_check", DIRS, problems, selftest))
