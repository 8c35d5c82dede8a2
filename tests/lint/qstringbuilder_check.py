#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fails on a QStringBuilder that can outlive what it points at.

The project builds with QT_USE_QSTRINGBUILDER: `a + b` of strings is a QStringBuilder that holds
references to a and b and becomes a QString only when converted. Kept in an `auto` variable, or
returned from a lambda (or an `auto` function) without an explicit return type, it outlives the
temporaries it refers to, and reading it later is a use-after-free (issue 28: `orrery runs push
--mlflow` aborted with heap corruption on such a lambda). Write the type: `QString x = a + b;`,
`[](double n) -> QString { return f(n) + QStringLiteral(" pts"); }`.

What is flagged: the initializer of an `auto` variable, or a `return` of a lambda / `auto` function
without a trailing return type (or with `-> auto`), whose expression (or a branch of its
top-level ?:) has a top-level `+` or `%` none of whose operands is plainly a number (a numeric
literal, `.size()`/`.count()`/`.length()`, `sizeof`, an operand with `*`, `/` or `-`) and which
is not a comparison. That is precise enough for this tree (pointer and numeric sums are left
alone) and errs towards flagging; a line that is a true false positive can say so with a
comment `qstringbuilder-ok` on it, and should say why.

Usage: qstringbuilder_check.py SOURCE_DIR    (app/ core/ remote/ bench/ tests/; not trainer/: no Qt)
       qstringbuilder_check.py --selftest
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sourcelint import strip  # noqa: E402

DIRS = ("app", "core", "remote", "bench", "tests")
MARK = "qstringbuilder-ok"


def closing(s, i, open_ch, close_ch):
    depth = 0
    for j in range(i, len(s)):
        if s[j] == open_ch:
            depth += 1
        elif s[j] == close_ch:
            depth -= 1
            if depth == 0:
                return j
    return len(s)


def statement_end(s, i):
    """End of the expression starting at i: the first ';' or ',' (or unmatched closer) at depth 0."""
    depth = 0
    for j in range(i, len(s)):
        c = s[j]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return j
            depth -= 1
        elif c in ";," and depth == 0:
            return j
    return len(s)


def split_top(expr, seps):
    """Splits expr at top-level occurrences of the single-character binary operators in seps
    (not at ++, +=, -> or a unary sign)."""
    parts, depth, start, prev = [], 0, 0, ""
    i = 0
    while i < len(expr):
        c = expr[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and c in seps:
            nxt = expr[i + 1:i + 2]
            binary = prev and prev not in "=(,?:+-*/%<>!&|^~"
            if binary and nxt not in ("=", c, ">") and not (c == "+" and prev == "+"):
                parts.append(expr[start:i])
                start = i + 1
        if not c.isspace():
            prev = c
        i += 1
    parts.append(expr[start:])
    return parts


def ternary_branches(expr):
    """The branches of a top-level ?: (recursively), else [expr]."""
    depth = 0
    for i, c in enumerate(expr):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "?" and depth == 0:
            # the matching ':' at depth 0 (skipping '::' and nested ?:)
            d, nested = 0, 0
            j = i + 1
            while j < len(expr):
                ch = expr[j]
                if ch in "([{":
                    d += 1
                elif ch in ")]}":
                    d -= 1
                elif d == 0 and ch == "?":
                    nested += 1
                elif d == 0 and ch == ":" and expr[j + 1:j + 2] != ":" and expr[j - 1] != ":":
                    if nested == 0:
                        return ternary_branches(expr[i + 1:j]) + ternary_branches(expr[j + 1:])
                    nested -= 1
                j += 1
            return [expr]
    return [expr]


COMPARISON = re.compile(r"==|!=|<=|>=|&&|\|\||(?<![<\w])<(?![<=])(?![\w:\s,*&]*>)|(?<![->])>(?![>=])")
NUMBER = re.compile(r"^\s*[-+]?(\d[\d']*\.?\d*([eE][-+]?\d+)?|\.\d+)[uUlLfF]*\s*$")
NUMERIC_HINT = re.compile(r"\.(size|count|length)\(\)\s*$|\bsizeof\b|^\s*\(?\s*(std::)?(abs|min|max|floor|ceil|lround|round)\b")


def is_numeric(operand):
    if NUMBER.match(operand) or NUMERIC_HINT.search(operand):
        return True
    # '*', '/' or a binary '-' at the top level: no string type has them.
    stripped = operand.replace("->", "..")
    return len(split_top(stripped, "*/-")) > 1


def hazard(expr):
    """Whether expr, kept as it is, may be a QStringBuilder."""
    expr = expr.strip()
    while expr.startswith("(") and closing(expr, 0, "(", ")") == len(expr) - 1:
        expr = expr[1:-1].strip()
    for branch in ternary_branches(expr):
        top = "".join(ch if d == 0 else " " for ch, d in zip(branch, depths(branch)))
        if COMPARISON.search(top):
            continue
        operands = split_top(branch, "+%")
        if len(operands) > 1 and not any(is_numeric(o) for o in operands):
            return True
    return False


def depths(s):
    d, out = 0, []
    for c in s:
        if c in ")]}":
            d -= 1
        out.append(d)
        if c in "([{":
            d += 1
    return out


def lambdas(s):
    """(start of the lambda, whether it has a trailing return type other than auto, body start,
    body end) for every lambda expression in the stripped source s."""
    for i, ch in enumerate(s):
        if ch != "[" or s.startswith("[[", i) or (i and s[i - 1] == "["):
            continue
        k = i - 1
        while k >= 0 and s[k].isspace():
            k -= 1
        if k >= 0 and (s[k].isalnum() or s[k] in "_])\""):
            continue  # a subscript, not a lambda
        p = closing(s, i, "[", "]") + 1
        while p < len(s) and s[p].isspace():
            p += 1
        if s.startswith("<", p):  # template lambda
            p = s.find(">", p) + 1
            while p < len(s) and s[p].isspace():
                p += 1
        if s.startswith("(", p):
            p = closing(s, p, "(", ")") + 1
        m = re.match(r"\s*(?:(?:mutable|noexcept|constexpr|static)\s*)*(?:->\s*([^{;]+?))?\s*\{", s[p:p + 400])
        if not m:
            continue
        typed = bool(m.group(1)) and m.group(1).strip() != "auto"
        body = p + m.end()
        yield i, typed, body, closing(s, body - 1, "{", "}")


def auto_functions(s):
    for m in re.finditer(r"(?:^|(?<=[;{}\n]))[ \t]*(?:(?:static|inline|constexpr)\s+)*"
                         r"(?:decltype\(auto\)|auto)\s*&?\s+[\w:~]+\s*\(", s):
        p = closing(s, m.end() - 1, "(", ")") + 1
        mm = re.match(r"\s*(?:const\s*)?(?:noexcept\s*)?(->[^{;]+)?\s*\{", s[p:p + 300])
        if not mm or (mm.group(1) and mm.group(1)[2:].strip() != "auto"):
            continue
        body = p + mm.end()
        yield m.start(), body, closing(s, body - 1, "{", "}")


def check(text):
    """[(line, message)] for the hazards in one file's text."""
    s = strip(text)
    lines = text.split("\n")
    found = {}

    def line_of(pos):
        return s.count("\n", 0, pos) + 1

    def report(pos, message):
        line = line_of(pos)
        if MARK not in lines[line - 1]:
            found.setdefault(line, message)

    bodies = []  # (start, end) of every function-like body, to skip nested ones
    untyped = []
    for start, typed, b, e in lambdas(s):
        bodies.append((b, e))
        if not typed:
            untyped.append((start, b, e, "lambda"))
    for start, b, e in auto_functions(s):
        bodies.append((b, e))
        untyped.append((start, b, e, "auto function"))
    for start, b, e, what in untyped:
        nested = [(nb, ne) for nb, ne in bodies if b < nb and ne <= e]
        for r in re.finditer(r"\breturn\b", s[b:e]):
            pos = b + r.start()
            if any(nb <= pos < ne for nb, ne in nested):
                continue
            expr = s[b + r.end():statement_end(s, b + r.end())]
            if hazard(expr):
                report(pos, f"{what} (line {line_of(start)}) without a return type returns a string "
                       "concatenation (a QStringBuilder): write -> QString")
    for m in re.finditer(r"\bauto\s*(?:&&|&|\*)?\s*(?:const\s*)?(\w+)\s*(=(?!=)|\{)", s):
        if m.group(2) == "{":
            expr = s[m.end():closing(s, m.end() - 1, "{", "}")]
        else:
            expr = s[m.end():statement_end(s, m.end())]
        if hazard(expr):
            report(m.start(), f"'auto {m.group(1)}' holds a string concatenation (a QStringBuilder): "
                   "write QString")
    return sorted(found.items())


SELFTEST_BAD = r'''
auto a = x + QStringLiteral("y");
const auto &b = QString::number(1) % u"x";
auto c =
    dir + QLatin1Char('/') + name;
auto d{first + second};
auto e = flag ? one + two : QString();
auto f = [](double n) { return formatCount(n) + QStringLiteral(" pts"); };
auto g = [&](const QString &s) { if (s.isEmpty()) return QString(); return (s + tail); };
auto h = [](int) -> auto { return a + b; };
auto label(const Run &r) { return r.name + QLatin1String(" (") + r.id + u')'; }
'''
SELFTEST_GOOD = r'''
QString a = x + QStringLiteral("y");
auto b = QString(x + y);
auto p = reinterpret_cast<const unsigned char *>(bytes.data()) + 2;
auto end = p + bytes.size();
auto n = count + 2 * std::max<int>(0, int(v.size()) - 1);
auto i = categories.size() == 1 ? 0 : qsizetype(std::lround(x * double(n - 1)));
auto ok = std::abs(a - b) <= 0.01 + 1e-9;
auto less = [](const A &a, const A &b) { return a.x + a.y < b.x + b.y; };
auto f = [](double n) -> QString { return formatCount(n) + QStringLiteral(" pts"); };
auto g = [](double n) -> QString { auto inner = [] { return 1; }; return s + t; };
auto h = [](double n) { return QStringLiteral("%1 + %2").arg(n).arg(n); };
auto k = std::accumulate(v.begin(), v.end(), 0, [](int s, const X &x) { return s + x.n; });  // qstringbuilder-ok: ints
auto it = list.begin() + 3;
auto s = QString(a) + b;  // qstringbuilder-ok: a test of the mark
auto t = a->size() + b.count();
'''


def selftest():
    bad = check(SELFTEST_BAD)
    expected_bad = [line for line, text in enumerate(SELFTEST_BAD.split("\n"), 1)
                    if text.strip() and not text.startswith("    ")]
    good = check(SELFTEST_GOOD)
    ok = True
    if [line for line, _ in bad] != expected_bad:
        print(f"selftest: flagged lines {[line for line, _ in bad]}, expected {expected_bad}")
        ok = False
    if good:
        print("selftest: flagged legitimate code:", *(f"  line {line}: {msg}" for line, msg in good), sep="\n")
        ok = False
    return ok


def main():
    if sys.argv[1:] == ["--selftest"]:
        return 0 if selftest() else 1
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    if not selftest():
        return 1
    root = sys.argv[1]
    problems, files = [], 0
    for top in DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if d != "third_party")
            for name in sorted(filenames):
                if not name.endswith((".cpp", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                files += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    for line, message in check(f.read()):
                        problems.append(f"{os.path.relpath(path, root)}:{line}: {message}")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} QStringBuilder hazard(s); give them an explicit QString type "
              f"(tests/lint/qstringbuilder_check.py says why)")
        return 1
    print(f"{files} files checked: no auto or lambda holds a QStringBuilder")
    return 0


if __name__ == "__main__":
    sys.exit(main())
