#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes a man page (roff, man macros) from what a program prints for --help, so that the page
cannot drift from the program: the build runs it on orrery-gui (QCommandLineParser's help) and
orrery-train (its usage text). orrery(1) comes from the command table instead (app/cli/manpage.cpp).

  usage2man.py --name NAME --summary TEXT --version V [--description TEXT] [--include FILE]
               -- PROGRAM [ARG...]

runs PROGRAM ARG... (default: PROGRAM --help), reads its standard output and writes the page on
standard output. The help it understands:

  usage: NAME ...               the synopsis ("Usage:" too); indented lines that start with
         NAME ...               NAME continue it, one synopsis line each
  Options:                      a heading of its own line, left out
    -x, --long ARG  text        an option: its spec, two or more spaces, its description;
                    more text   deeper lines continue the description
  Other text                    paragraphs of the description, in order

--include FILE appends roff (.SH sections) written by hand: what the help cannot say.
"""
import argparse
import re
import subprocess
import sys

OPTION = re.compile(r"^(\s{1,8})(-\S.*?)(?:\s{2,}(\S.*))?$")
HEADING = re.compile(r"^[A-Z][A-Za-z ]*:$")
# In a spec or a synopsis: options bold, metavariables (FILE, <FILE>, KEY=VALUE) italic.
SPEC_TOKEN = re.compile(r"(?<![\w-])(--?[A-Za-z][A-Za-z0-9-]*)|(<[^>]+>|\b[A-Z](?:[A-Z0-9_]*[A-Z0-9])?\b)")


def escape(text):
    text = (text.replace("\\", "\\e").replace("-", "\\-").replace("'", "\\(aq")
            .replace("`", "\\(ga"))
    # A line that starts with a dot would be a request.
    return re.sub(r"(?m)^\.", r"\\&.", text)


def spec(text):
    out, at = [], 0
    for m in SPEC_TOKEN.finditer(text):
        out.append(escape(text[at:m.start()]))
        font = "B" if m.group(1) else "I"
        out.append("\\f%s%s\\fR" % (font, escape(m.group(0))))
        at = m.end()
    out.append(escape(text[at:]))
    return "".join(out)


def parse(help_text, name):
    """Returns (synopsis lines, paragraphs, options as (spec, description))."""
    lines = help_text.rstrip("\n").split("\n")
    synopsis, paragraphs, options = [], [], []
    i = 0
    m = re.match(r"^[Uu]sage:\s*(.*)$", lines[0]) if lines else None
    if m:
        # QCommandLineParser names the program as it was started (a path): the page names it.
        words = m.group(1).split(None, 1)
        if words and words[0].rsplit("/", 1)[-1] == name:
            words[0] = name
        synopsis.append(" ".join(words))
        i = 1
        continuation = re.compile(r"^\s+" + re.escape(name) + r"\b")
        while i < len(lines) and continuation.match(lines[i]):
            synopsis.append(lines[i].strip())
            i += 1
    paragraph = None
    option_indent = None
    for line in lines[i:]:
        if not line.strip():
            paragraph, option_indent = None, None
            continue
        if HEADING.match(line) and not line.startswith(" "):
            paragraph, option_indent = None, None
            continue
        o = OPTION.match(line)
        if o:
            options.append([o.group(2).strip(), (o.group(3) or "").strip()])
            paragraph, option_indent = None, len(o.group(1))
            continue
        indent = len(line) - len(line.lstrip())
        if option_indent is not None and indent > option_indent:
            options[-1][1] = (options[-1][1] + " " + line.strip()).strip()
            continue
        option_indent = None
        if paragraph is None:
            paragraph = []
            paragraphs.append(paragraph)
        paragraph.append(line.strip())
    return synopsis, [" ".join(p) for p in paragraphs], options


def page(name, summary, version, description, help_text, include):
    synopsis, paragraphs, options = parse(help_text, name)
    if not synopsis or not options:
        raise SystemExit("usage2man: no usage line or no options in the help of %s" % name)
    roff = [
        '.\\" Generated from `%s --help` by packaging/usage2man.py; do not edit.' % name,
        '.TH %s 1 "" "%s %s" "User Commands"' % (name.upper().replace("-", "\\-"), escape(name), version),
        ".SH NAME",
        "%s \\- %s" % (escape(name), escape(summary)),
        ".SH SYNOPSIS",
    ]
    for n, line in enumerate(synopsis):
        if n:
            roff.append(".br")
        if line.startswith(name):
            roff += [".B %s" % escape(name), spec(line[len(name):].strip())]
        else:
            roff.append(spec(line))
    roff.append(".SH DESCRIPTION")
    for p in ([description] if description else []) + paragraphs:
        roff += [".PP", escape(p)]
    roff.append(".SH OPTIONS")
    for option_spec, text in options:
        roff += [".TP", spec(option_spec), escape(text)]
    text = "\n".join(roff) + "\n"
    if include:
        with open(include, encoding="utf-8") as f:
            text += f.read()
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", required=True)
    parser.add_argument("--summary", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--description", default="")
    parser.add_argument("--include")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    command = args.command if len(args.command) > 1 else args.command + ["--help"]
    done = subprocess.run(command, stdout=subprocess.PIPE, check=False)
    if done.returncode != 0:
        raise SystemExit("usage2man: %s exited with %d" % (" ".join(command), done.returncode))
    sys.stdout.write(page(args.name, args.summary, args.version, args.description,
                          done.stdout.decode("utf-8"), args.include))


if __name__ == "__main__":
    main()
