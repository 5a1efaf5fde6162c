#!/usr/bin/env python3
"""checksrc.py [--pending FILE] [FILE...]: the source rules of docs/STYLE.md,
checked the way curl's checksrc checks curl's: one line per violation,
FILE:LINE: what, and exit 1 if there is any.

  banned     a call of atoi, atof, sprintf, strcpy, strcat or gets (outside
             comments and string literals)
  width      a line wider than 79 columns (.clang-format's ColumnLimit)
  length     a function longer than 80 lines, from its first line (the
             start of its signature) to its closing brace, in the
             program's sources (the test programs under tests/, whose
             functions are lists of checks, are held to the other two)

Without FILE arguments it checks every C source and header of the
checkout (git ls-files, else a walk of the tree, build folders left out).
--pending FILE names functions that are known to be too long and are
being restructured, one FILE:FUNCTION a line ('#' starts a comment): they
are skipped, and the check prints how many it skipped and which, so that
nothing is skipped silently. An entry that is no longer too long is
printed as such (remove it from the list).
SPDX-License-Identifier: MIT
"""
import os
import re
import subprocess
import sys

BANNED = ("atoi", "atof", "sprintf", "strcpy", "strcat", "gets")
BANNED_RE = re.compile(r"\b(" + "|".join(BANNED) + r")\s*\(")
MAX_COLUMNS = 79
MAX_LINES = 80
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do"}


def blank_comments_and_strings(text):
    """The text with comments, string and character literals replaced by
    spaces (newlines kept), so that line numbers and columns still hold."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def blank_preprocessor(code):
    """Preprocessor lines (and their continuations) blanked out."""
    lines = code.split("\n")
    cont = False
    for k, line in enumerate(lines):
        if cont or line.lstrip().startswith("#"):
            cont = line.endswith("\\")
            lines[k] = ""
    return "\n".join(lines)


def function_name(header):
    """The name a top-level header 'TYPE NAME(ARGS)' defines, or None when
    the header is not a function's (a struct, an initialiser)."""
    h = re.sub(r"__attribute__\s*\(\(.*?\)\)", " ", header, flags=re.S)
    if re.match(r"\s*(typedef|struct|union|enum)\b[^(]*$", h) or "=" in h:
        return None
    m = re.search(r"([A-Za-z_]\w*)\s*\(", h)
    if not m or m.group(1) in KEYWORDS:
        return None
    return m.group(1)


def functions(code):
    """(name, first line, last line) of every function defined in code."""
    found = []
    depth = 0
    start = 0  # offset just after the last top-level ';' or '}'
    open_at = None
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                open_at = (function_name(code[start:i]), start)
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and open_at:
                name, s = open_at
                if name:
                    first = s + len(code[s:]) - len(code[s:].lstrip())
                    found.append((name, code.count("\n", 0, first) + 1,
                                  code.count("\n", 0, i) + 1))
                open_at = None
                start = i + 1
        elif c == ";" and depth == 0:
            start = i + 1
    return found


def check_file(path, rel, pending, skipped, problems):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for k, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_COLUMNS:
            problems.append("%s:%d: line of %d columns (at most %d)"
                            % (rel, k, len(line), MAX_COLUMNS))
    code = blank_comments_and_strings(text)
    for k, line in enumerate(code.split("\n"), 1):
        for m in BANNED_RE.finditer(line):
            problems.append("%s:%d: %s() is banned (docs/STYLE.md: "
                            "strtol/strtod with an end check, snprintf, "
                            "core_buf)" % (rel, k, m.group(1)))
    if rel.startswith("tests/"):
        return
    for name, first, last in functions(blank_preprocessor(code)):
        n = last - first + 1
        key = "%s:%s" % (rel, name)
        if key in pending:
            pending[key] = n
            if n > MAX_LINES:
                skipped.append("%s (%d lines)" % (key, n))
            continue
        if n > MAX_LINES:
            problems.append("%s:%d: function %s is %d lines (at most %d)"
                            % (rel, first, name, n, MAX_LINES))


def tracked_sources(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "*.c", "*.h"],
                             capture_output=True, text=True, check=True)
        files = [l for l in out.stdout.split("\n") if l]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, subdirs, names in os.walk(root):
        subdirs[:] = sorted(s for s in subdirs
                            if not s.startswith((".", "build", "scratch")))
        for nm in sorted(names):
            if nm.endswith((".c", ".h")):
                files.append(os.path.relpath(os.path.join(d, nm), root))
    return files


def read_pending(path):
    pending = {}
    with open(path, encoding="utf-8") as f:
        for k, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if not re.fullmatch(r"[\w./-]+\.[ch]:\w+", line):
                sys.exit("%s:%d: want FILE:FUNCTION, got '%s'"
                         % (path, k, line))
            pending[line] = None
    return pending


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    pending = {}
    args = argv[1:]
    if len(args) >= 2 and args[0] == "--pending":
        pending = read_pending(args[1])
        args = args[2:]
    if args:
        files = [(a, a) for a in args]
    else:
        files = [(os.path.join(root, f), f) for f in tracked_sources(root)]
    if not files:
        print("checksrc: no C file found under %s" % root, file=sys.stderr)
        return 1
    skipped, problems = [], []
    for path, rel in files:
        check_file(path, rel, pending, skipped, problems)
    for p in problems:
        print(p)
    if skipped:
        print("checksrc: skipped %d pending function%s over %d lines: %s"
              % (len(skipped), "" if len(skipped) == 1 else "s", MAX_LINES,
                 ", ".join(skipped)))
    for key, n in sorted(pending.items()):
        if n is None:
            print("checksrc: pending %s: no such function (remove it from "
                  "the list)" % key)
        elif n <= MAX_LINES:
            print("checksrc: pending %s is %d lines now (remove it from the "
                  "list)" % (key, n))
    if problems:
        print("checksrc: %d problem%s in %d files"
              % (len(problems), "" if len(problems) == 1 else "s", len(files)))
        return 1
    print("checksrc: %d files, no banned call, no line over %d columns, no "
          "function over %d lines" % (len(files), MAX_COLUMNS, MAX_LINES)
          + (" but the %d pending" % len(skipped) if skipped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
