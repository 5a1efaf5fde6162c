#!/usr/bin/env bash
# prose.sh: the committed reports read as people write: no number in the
# prose of report.md with more than four significant digits (sentences
# give three, a fourth only where three would show two different numbers
# alike), and Markdown escapes only where Markdown needs them (no "\(",
# "\)", "\-": "gzip -6 (level 6)" stays as written).
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${SRC:?}"

prose_check() { # prose_check REPORT.md
  python3 - "$1" <<'PY'
import re, sys
t = open(sys.argv[1], encoding="utf-8").read()
# Prose: what is not code (fenced blocks, code spans). A number glued to
# a name or a version ("runsc 0.0~20221219.0", "b0001") is a name.
p = re.sub(r"```.*?```", "", t, flags=re.S)
p = re.sub(r"`[^`\n]*`", "", p)
# Tables are not prose (their cells hold names and versions as given),
# nor is the decision rule: it restates the registered thresholds exactly
# (1/1.1 is 0.909091 there, never a rounded 0.909 that would misstate it).
p = re.sub(r"^## Decision rule\n.*?(?=^## )", "", p, flags=re.S | re.M)
p = "\n".join(l for l in p.split("\n") if not l.startswith("|"))
long = []
for m in re.finditer(r"(?<![\w.~+-])\d+\.\d+(?:e[-+]?\d+)?(?![\w.~+-])", p):
    digits = re.sub(r"e.*", "", m.group(0)).replace(".", "").lstrip("0")
    if len(digits) > 4:
        long.append(p[max(0, m.start() - 40):m.end() + 5])
# An escaped backslash ("\\\\", a command's own backslash) is not an escape
# of what follows it.
esc = re.findall(r".{0,30}\\[()\-].{0,10}", t.replace("\\\\", "  "))
ok = True
if long:
    print("numbers longer than four significant digits:", long[:5])
    ok = False
if esc:
    print("escapes Markdown does not need:", esc[:5])
    ok = False
sys.exit(0 if ok else 1)
PY
}
for r in "$SRC"/studies/*/data/*/report/report.md; do
  check "$(basename "$(dirname "$(dirname "$r")")"): numbers and escapes as people write" \
    prose_check "$r"
done
# The check itself fails what it must.
T=$(mktemp -d)
on_exit 'rm -rf "$T"'
printf 'the CI high end 0.188838 < 0.333\n' > "$T/long.md"
printf 'gzip \\-6 \\(level 6\\)\n' > "$T/esc.md"
printf 'runsc 0.0~20221219.0; `1.234567`; 0.189 < 0.3333\n' > "$T/fine.md"
check "a long number is found" eval '! prose_check "$T/long.md" >/dev/null'
check "a needless escape is found" eval '! prose_check "$T/esc.md" >/dev/null'
check "names, code and four digits pass" prose_check "$T/fine.md"
done_testing 5
