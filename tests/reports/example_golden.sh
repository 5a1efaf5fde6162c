#!/bin/bash
# example_golden.sh: the committed example's report, rendered again from
# the checkout (studies/sandbox-cost: protocols/sandbox-cost.lua over
# data/), equals data/sandbox-cost/report/ there byte for byte:
# report.md, report.html, every plot, provenance.md and report.xlsx (whose
# timestamps come from the data, not the clock, so it is byte-identical
# too). A difference fails,
# showing the first differing lines (of the XML parts, for the XLSX).
# Nothing is written into the checkout, and the comparison is shown to
# catch one changed byte in each kind of file.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}" "${SRC:?}"
study=$SRC/studies/sandbox-cost
sheet=$study/protocols/sandbox-cost.lua
golden=$study/data/sandbox-cost/report
T=$(mktemp -d)
on_exit 'rm -rf "$T"'

# Every name, size, mode and time under data/, and every file's SHA-256.
snapshot() {
  (cd "$study/data" && find . -printf '%p %s %m %T@\n' | LC_ALL=C sort &&
    find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
}
# same_file GOLDEN GOT: equal byte for byte; otherwise prints where they
# differ: the first differing lines of a text file, the first differing
# byte of an XLSX and the first differing lines of each XML part.
same_file() {
  cmp -s "$1" "$2" && return 0
  [ -e "$2" ] || { echo "$2: not rendered"; return 1; }
  case $1 in
    *.xlsx)
      cmp "$1" "$2"
      python3 - "$1" "$2" <<'PY'
import difflib, sys, zipfile
def parts(path):
    try:
        with zipfile.ZipFile(path) as z:
            return {n: z.read(n).decode("utf-8", "replace") for n in z.namelist()}
    except Exception as e:  # a damaged archive: say so, show no parts
        print("%s: %s" % (path, e))
        return {}
a, b = parts(sys.argv[1]), parts(sys.argv[2])
for name in sorted(set(a) | set(b)):
    if a.get(name) == b.get(name):
        continue
    print("part %s differs:" % name)
    # XML parts are often one long line: compare them tag by tag.
    split = lambda t: t.replace("><", ">\n<").splitlines()
    diff = difflib.unified_diff(split(a.get(name, "")), split(b.get(name, "")),
                                "committed", "rendered", lineterm="", n=1)
    print("\n".join(list(diff)[:12]))
PY
      ;;
    *) diff -u "$1" "$2" | head -n 20 ;;
  esac
  return 1
}

snapshot >"$T/before"
check "prereg report renders the committed example" \
  quiet "$PREREG" report "$sheet" --data "$study/data" --out "$T/out"
check "nothing is written into the checkout's data/" \
  cmp -s "$T/before" <(snapshot)
check "the same files as the committed report: $(ls "$T/out" | tr '\n' ' ')" \
  test "$(ls "$golden")" = "$(ls "$T/out")"
n_svg=$(ls "$golden"/*.svg | wc -l)
check "the overview and a plot for each of the seven workload metrics ($n_svg)" \
  test "$n_svg" -eq 8
for f in "$golden"/report.md "$golden"/report.html "$golden"/*.svg \
         "$golden"/provenance.md "$golden"/report.xlsx; do
  check "$(basename "$f") re-renders byte for byte" \
    same_file "$f" "$T/out/$(basename "$f")"
done

# The comparison itself: one byte changed in the middle of a rendered
# file of each kind must fail it, and say where.
for f in report.md report.html "$(basename "$(ls "$golden"/*.svg | head -n 1)")" \
         report.xlsx; do
  python3 - "$T/out/$f" "$T/changed-$f" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[len(d) // 2] ^= 0x01
open(sys.argv[2], "wb").write(d)
PY
  if same_file "$golden/$f" "$T/changed-$f" >"$T/shown.txt" 2>&1; then
    bad "one changed byte in $f passes the comparison"
  else
    ok
  fi
  check "and the comparison shows where $f differs" test -s "$T/shown.txt"
done
done_testing 24
