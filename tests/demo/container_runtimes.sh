#!/bin/bash
# container_runtimes.sh: the committed container-runtimes study,
# studies/container-runtimes/data/container-runtimes (registered with its
# CRI-O arm, amended when that arm was refused, run in full on a private
# containerd, frozen and reported), still verifies: its chain is the
# committed sheets' (v0.lua, then the sheet), every run of the plan is
# there and valid for both arms on one image, its report re-renders byte
# for byte and sets each published figure beside a measured ratio; a
# changed byte fails verify. A copy is checked: nothing is written into
# the checkout.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/lib.sh"
: "${PREREG:?PREREG must name the prereg binary}"
study="$SRC/studies/container-runtimes"
sheet="$study/protocols/container-runtimes.lua"
committed="$study/data/container-runtimes"
cp -R "$committed" "$tmp/container-runtimes"
d="$tmp/container-runtimes"

expect 0 "prereg verify of the committed study" "$PREREG" verify "$sheet" --data "$tmp"
check_grep "every planned run counted, none invalid" \
  "status: COMPLETE \(runs: 70 counted, 0 invalid" "$out"
check "v0 is the committed first version, with the CRI-O arm" \
  grep -q 'name = "crio"' "$d/versions/v0.lua"
check "the sheet is the newest version, v1" cmp -s "$sheet" "$d/versions/v1.lua"

python3 - "$d"/batches/*.csv <<'PY' && ok || bad "the rows"
import csv, sys
rows = [r for f in sys.argv[1:] for r in csv.DictReader(open(f))]
errs = []
arms = {r["arm"] for r in rows}
if arms != {"containerd-runc", "containerd-gvisor"}:
    errs.append("arms %s" % sorted(arms))
bad_rows = [r["run_id"] for r in rows if r["valid"] != "1"]
if bad_rows:
    errs.append("invalid: %s" % bad_rows[:5])
if any(r["quick"] not in ("", "0") for r in rows):
    errs.append("quick rows")
digests = {r["image_digest"] for r in rows}
if len(digests) != 1 or not next(iter(digests)).startswith("sha256:"):
    errs.append("image digests %s" % sorted(digests))
for e in errs:
    print(e, file=sys.stderr)
sys.exit(1 if errs else 0)
PY

expect 0 "the report renders from the copy" \
  "$PREREG" report "$sheet" --data "$tmp" --out "$tmp/out"
golden="$committed/report"
check "the same files as the committed report" test "$(ls "$golden")" = "$(ls "$tmp/out")"
for f in "$golden"/*; do
  check "$(basename "$f") re-renders byte for byte" cmp -s "$f" "$tmp/out/$(basename "$f")"
done

# The publications beside the measurement: seed 004's six gVisor ratios
# and seed 003's Kata figure on the small files, each with a measured
# ratio, its interval and a verdict; CRI-O named as not measured.
md="$golden/report.md"
check "the report has the section Published and measured" grep -q '^## Published and measured$' "$md"
n=$(grep -cE '^\| [a-z-]+ \| [a-z0-9_\\]+ \| containerd-gvisor \| [0-9.]+× [^|]*\| [0-9.]+× \| [0-9.]+–[0-9.]+ \| \*\*[a-z ]+\*\* \|' "$md")
check "seven published ratios, each beside a measured one ($n)" test "$n" -eq 7
for p in "cpu.*0\.939×" "memory.*0\.974×" "io \| read.*0\.236×" "io \| write.*0\.256×" \
         "http \| requests.*0\.363×" "http \| p99.*3\.15×" "small-files.*36\.7×"; do
  check_grep "published: $p" "^\| $p" "$(cat "$md")"
done
check_grep "CRI-O's figures are named as not measured" "CRI-O 3167\.8 there.*not measured here" "$(cat "$md")"
check_grep "the arm the first version had is named as removed" "arm crio removed" "$(cat "$md")"

f=$(ls "$d"/batches/*.csv | tail -n 1)
chmod u+w "$f"
printf 'x' | dd of="$f" bs=1 seek=200 conv=notrunc 2> /dev/null
expect 1 "a changed byte fails verify" "$PREREG" verify "$sheet" --data "$tmp"
check_grep "and verify names the file" "$(basename "$f")" "$out"
done_testing 30
