#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fails on a call posted to an object that a worker thread looked up through a guard.

`QMetaObject::invokeMethod(self.data(), ...)` (or `guard ? guard.data() : other`) on a worker
thread looks at the QPointer there and then posts to the object: deleted on its own thread between
the look and the post, the object is sent an event it can no longer take (a SIGSEGV in
QApplicationPrivate::notify_helper; CI hit it in tst_launcher_checks). Use postIfAlive()
(app/gui/base/postifalive.h): it posts to an object that outlives the work and reads the QPointer
on the receiver's thread. Qt 6.4's `future.then(this, f)` (and onFailed, onCanceled with a
context) does the same inside Qt: use thenIfAlive() there. What is flagged: an invokeMethod whose
first argument calls `.data()` or `.get()`, or chooses with `?`; a then, onFailed or onCanceled
whose first argument is `this`.

Usage: post_back_check.py SOURCE_DIR
       post_back_check.py --selftest
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sourcelint import run, strip  # noqa: E402


DIRS = ("app", "core", "remote")
INVOKE = re.compile(r"\binvokeMethod\s*\(")
LOOKED_UP = re.compile(r"\.\s*(?:data|get)\s*\(\s*\)|\?")
CONTINUATION = re.compile(r"\.\s*(?:then|onFailed|onCanceled)\s*\(")


def first_argument(code, start):
    """The text of the call's first argument: up to the first comma or closing parenthesis at
    the call's own depth."""
    depth, j = 0, start
    while j < len(code):
        c = code[j]
        if c in "([{<" and not (c == "<" and code[j - 1:j] == " "):
            depth += 1
        elif c in ")]}>" and not (c == ">" and code[j - 1:j] in ("-", " ")):
            if depth == 0:
                break
            depth -= 1
        elif c == "," and depth == 0:
            break
        j += 1
    return code[start:j]


def problems(text, name):
    code = strip(text)
    found = []
    for m in INVOKE.finditer(code):
        if LOOKED_UP.search(first_argument(code, m.end())):
            line = code.count("\n", 0, m.start()) + 1
            found.append(f"{name}:{line}: invokeMethod posts to a receiver looked up on this thread; "
                         "use postIfAlive (app/gui/base/postifalive.h)")
    for m in CONTINUATION.finditer(code):
        if first_argument(code, m.end()).strip() == "this":
            line = code.count("\n", 0, m.start()) + 1
            found.append(f"{name}:{line}: Qt 6.4's continuation with a context races with its deletion; "
                         "use thenIfAlive (app/gui/base/postifalive.h)")
    found.sort(key=lambda p: int(p.split(":")[1]))
    return found


def selftest():
    good = ("QMetaObject::invokeMethod(qApp, [self] { if (self) self->f(); });\n"
            "QMetaObject::invokeMethod(fallback, [guard, done] { if (guard) done(); }, Qt::QueuedConnection);\n"
            "QMetaObject::invokeMethod(m_worker, [this] { m_thread.quit(); });\n"
            "QMetaObject::invokeMethod(owner(x, y), [] {});\n"
            "// QMetaObject::invokeMethod(self.data(), ...) in a comment is fine\n"
            "future.then(QtFuture::Launch::Sync, [](int) {});\n"
            "thenIfAlive(future, this, [this](int v) { use(v); });\n")
    bad = ("QMetaObject::invokeMethod(\n    self.data(),\n    [self] { if (self) self->f(); });\n"
           "QMetaObject::invokeMethod(guard.data() ? guard.data() : fallback, [] {});\n"
           "QMetaObject::invokeMethod(weak.lock().get(), [] {});\n"
           "run().then(this, [this](int v) { use(v); })\n"
           "    .onFailed( this, [this] { fail(); });\n")
    assert problems(good, "good") == [], problems(good, "good")
    lines = [p.split(":")[1] for p in problems(bad, "bad")]
    assert lines == ["1", "4", "5", "6", "7"], problems(bad, "bad")
    print("post_back_check: selftest ok")
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv, __doc__, "post_back_check", DIRS, problems, selftest))
