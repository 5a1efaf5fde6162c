#!/bin/bash
# replication.sh: the committed replication of the published Docker study,
# studies/agent-sandbox-replication (registered as published, amended, run
# in full on a private engine, frozen and reported), still verifies: its
# chain is the committed sheets' (v0.lua the published design, then each
# amendment, the sheet last), every run of the plan is there and valid on
# one image, its report re-renders byte for byte and sets each published
# ratio beside a measured one; a changed byte fails verify. A copy is
# checked: nothing is written into the checkout.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/lib.sh"
: "${PREREG:?PREREG must name the prereg binary}"
S="$SRC/studies/agent-sandbox-replication"
sheet="$S/protocols/agent-sandbox-replication.lua"
R="$S/data/agent-sandbox-replication/versions"
cp -R "$S/data/agent-sandbox-replication" "$tmp/agent-sandbox-replication"
d="$tmp/agent-sandbox-replication"

expect 0 "prereg verify the committed data folder" \
  "$PREREG" verify "$sheet" --data "$tmp"
check_grep "every planned run counted, none invalid" \
  "status: COMPLETE \(runs: 140 counted, 0 invalid" "$out"
check "v0 is the published design, byte for byte" cmp -s "$R/v0.lua" "$d/versions/v0.lua"
check "v1 and v2 are the committed amendments" \
  sh -c "cmp -s '$R/v1.lua' '$d/versions/v1.lua' && cmp -s '$R/v2.lua' '$d/versions/v2.lua'"
check "the sheet is the newest version, v3" cmp -s "$sheet" "$d/versions/v3.lua"

python3 - "$d"/batches/*.csv <<'PY' && ok || bad "the rows"
import csv, sys
rows = [r for f in sys.argv[1:] for r in csv.DictReader(open(f))]
errs = []
arms = {r["arm"] for r in rows}
if arms != {"runc", "gvisor"}:
    errs.append("arms %s" % sorted(arms))
bad_rows = [r["run_id"] for r in rows if r["valid"] != "1"]
if bad_rows:
    errs.append("invalid: %s" % bad_rows[:5])
digests = {r["image_digest"] for r in rows}
if len(digests) != 1 or not next(iter(digests)).startswith("sha256:"):
    errs.append("image digests %s" % sorted(digests))
for e in errs:
    print(e, file=sys.stderr)
sys.exit(1 if errs else 0)
PY

expect 0 "the report renders from the copy" \
  "$PREREG" report "$sheet" --data "$tmp" --out "$tmp/out"
golden="$S/data/agent-sandbox-replication/report"
check "the same files as the committed report" test "$(ls "$golden")" = "$(ls "$tmp/out")"
for f in "$golden"/*; do
  check "$(basename "$f") re-renders byte for byte" cmp -s "$f" "$tmp/out/$(basename "$f")"
done

# The publication beside the measurement: a row per published ratio
# (startup, idle-memory, replay, compile inner_s, files inner_s and
# wall_s), each with a measured ratio, its interval and a verdict.
md="$golden/report.md"
check "the report has the section Published and measured" grep -q '^## Published and measured$' "$md"
n=$(grep -cE '^\| [a-z-]+ \| [a-z_\\]+ \| gvisor \| [0-9.]+× [^|]*\| [0-9.]+× \| [0-9.]+–[0-9.]+ \| \*\*[a-z ]+\*\* \|' "$md")
check "six published ratios, each beside a measured one ($n)" test "$n" -eq 6
for p in "startup.*1\.48×" "idle-memory.*4\.23×" "replay.*1\.88×" "compile.*1\.15×" \
         "files \| inner.*1\.03× \(tie\)"; do
  check_grep "published: $p" "^\| $p" "$(cat "$md")"
done
check_grep "the host measured on is named" "^Measured here on: .*cores, .*MiB of memory, Linux" "$(cat "$md")"
check_grep "the versions that differ are named" "runsc 20221219.*Docker 20\.10\.24" "$(cat "$md")"

# One changed byte in the frozen batch must be caught.
f=$(ls "$d"/batches/*.csv | tail -n 1)
chmod u+w "$f"
printf 'x' | dd of="$f" bs=1 seek=200 conv=notrunc 2> /dev/null
expect 1 "a changed byte fails verify" "$PREREG" verify "$sheet" --data "$tmp"
check_grep "and verify names the file" "$(basename "$f")" "$out"
done_testing 32
