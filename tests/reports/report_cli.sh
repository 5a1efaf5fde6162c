#!/bin/bash
# report_cli.sh: prereg report end to end: register a sheet with an
# import-only workload, import a CSV, report twice (byte-identical md, html
# and svg), read the XLSX back through LibreOffice and compare its numbers
# with `prereg analyze --json`, render the HTML in headless Chromium, and
# refuse (or stamp, with --force) data that does not verify.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?set PREREG to the built binary}"

for tool in libreoffice chromium python3; do
  if ! command -v "$tool" >/dev/null; then
    bad "$tool is missing: run scripts/deps.sh test"
    done_testing
  fi
done

W=$(mktemp -d)
on_exit 'chmod -R u+w "$W" 2>/dev/null; rm -rf "$W"'
cd "$W" || exit 1
mkdir protocols
cat >protocols/rep.lua <<'EOF'
protocol {
  id = "rep-test",
  title = "Report <script>alert(1)</script> | test",
  question = "Does the report say *everything*?",
  author = "T. Ester",
  arms = {
    { name = "bare", reference = true },
    { name = "bwrap" },
    { name = "slow" },
  },
  workloads = {
    { name = "imported", metrics = { "wall_s" } },
  },
  rule = {
    estimator = "median", confidence = 0.95, resamples = 2000, seed = 17,
    verdicts = {
      { "slower", ci_excludes = 1, ratio_above = 1.10 },
      { "faster", ci_excludes = 1, ratio_below = 1 / 1.10 },
      { "tie", ci_within = { 0.95, 1.05 } },
    },
  },
  hypotheses = {
    { id = "H1", says = "bwrap takes at least 2x as long as bare",
      workload = "imported", metric = "wall_s", arms = { "bwrap" },
      claim = at_least(2) },
  },
  threats = { "Synthetic data: the numbers mean nothing." },
}
EOF
{
  echo "workload,arm,metric,value,run,started_at"
  for i in $(seq 1 12); do
    # Round i at minute i: the arms interleaved in time.
    t=$(printf '2026-10-21T08:%02d' "$i")
    echo "imported,bare,wall_s,0.10$i,$i,$t:10Z"
    echo "imported,bwrap,wall_s,0.31$i,$i,$t:20Z"
    # Only 4 runs of the third arm: prereg must flag it as a threat.
    [ "$i" -le 4 ] && echo "imported,slow,wall_s,0.12$i,$i,$t:30Z"
  done
} >data.csv

S=protocols/rep.lua
check "register" "$PREREG" register $S --data d
check "import" "$PREREG" import $S data.csv --data d
"$PREREG" analyze $S --data d --json >analysis.json
check "analyze --json" test -s analysis.json

R=d/rep-test/report
check "report exits 0" "$PREREG" report $S --data d
for f in report.md report.html report.xlsx; do
  check "$f written" test -s $R/$f
done
check "two plots: the overview and the one workload's runs" \
  test "$(ls $R/*.svg | wc -l)" = 2
check "provenance.md beside the report" test -s $R/provenance.md
mkdir first
cp $R/report.md $R/report.html $R/provenance.md $R/*.svg first/
sleep 1
check "report again" "$PREREG" report $S --data d
for f in first/*; do
  check "$(basename "$f") byte-identical on a second run" cmp -s "$f" "$R/$(basename "$f")"
done
check "--out elsewhere" "$PREREG" report $S --data d --out elsewhere
check "same md with --out" cmp -s first/report.md elsewhere/report.md
check "same html with --out" cmp -s first/report.html elsewhere/report.html

# Contents that must be there.
md=$R/report.md
check "title escaped in md" grep -qxF '# Report \<script>alert(1)\</script> \| test' $md
for s in '## Summary' '- H1 **' '| Workload · metric | n | bare (reference) | bwrap | slow |' \
  '](overview.svg)' '## The data' '](plot-1-imported-wall_s.svg)' '### Spread' \
  '## Setup' '## Arms and workloads' '## Decision rule' \
  '## Deviations' 'None.' '## What fell along the way' \
  '## Threats to validity' 'Synthetic data' '## Provenance' \
  '## Reproduce' 'prereg report data/rep-test/versions/v0.lua --out report-again' \
  'Few valid runs' 'SHA-256' '[provenance.md](provenance.md)'; do
  check "md has $s" grep -qF -- "$s" $md
done
check "every file's digest in provenance.md, not in report.md" \
  bash -c "grep -q '^| batches/b0001.csv | \`[0-9a-f]\{64\}\` |$' $R/provenance.md &&
    ! grep -q '^| batches/b0001.csv |' $md"
check "no raw script in html" bash -c "! grep -q '<script' $R/report.html"

# XLSX through LibreOffice: every sheet to CSV, raw values (not as shown).
mkdir xl
HOME=$W/lohome libreoffice --headless --convert-to \
  'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1' \
  --outdir xl $R/report.xlsx >lo.log 2>&1
check "LibreOffice converted the Summary" test -s xl/report-Summary.csv
check "LibreOffice converted Raw" test -s xl/report-Raw.csv
for sh in Hypotheses Deviations Processes Provenance; do
  check "sheet $sh exists" test -f xl/report-$sh.csv
done
cat >cmp.py <<'EOF'
import csv, json, sys
a = json.load(open("analysis.json"))
rows = list(csv.reader(open("xl/report-Summary.csv", encoding="utf-8")))
hdr = next(i for i, r in enumerate(rows) if r and r[0] == "Workload")
h = rows[hdr]
got = {}
for r in rows[hdr + 1:]:
    if len(r) > 12 and r[0] and r[2]:
        got[(r[0], r[1], r[2])] = dict(zip(h, r))
bad = 0
def close(x, y):
    # A number the JSON leaves null (no CI with too few values) is "n/a".
    if y is None:
        return x == "n/a"
    return abs(float(x) - float(y)) <= 1e-9 * max(1.0, abs(float(y)))
# A row per workload, metric and arm, the reference's included.
if len(a["cells"]) != len(got) or not a["results"]:
    print("rows: json %d cells, xlsx %d" % (len(a["cells"]), len(got)))
    bad += 1
for c in a["cells"]:
    g = got.get((c["workload"], c["metric"], c["arm"]))
    if g is None or not close(g["Median"], c["median"]) or \
            not close(g["IQR"], c["q3"] - c["q1"]) or \
            not close(g["Min"], c["min"]) or not close(g["Max"], c["max"]):
        print("cell", c, g); bad += 1
for res in a["results"]:
    g = got.get((res["workload"], res["metric"], res["arm"]))
    if g is None:
        print("missing", res); bad += 1; continue
    for k, col in [("ratio", "Ratio"), ("ci_low", "CI low"),
                   ("ci_high", "CI high"), ("median", "Median"), ("n", "n")]:
        if not close(g[col], res[k]):
            print(k, g[col], res[k]); bad += 1
    if g["Verdict"] != res["verdict"]:
        print("verdict", g["Verdict"], res["verdict"]); bad += 1
raw = list(csv.reader(open("xl/report-Raw.csv", encoding="utf-8")))
# One note (the columns with one value in every row), then the header.
top = next(i for i, r in enumerate(raw) if "value" in r)
col = raw[top].index("value")
vals = sorted(float(r[col]) for r in raw[top + 1:] if len(r) > col and r[col])
src = sorted(float(l.split(",")[3]) for l in open("data.csv").read().split("\n")[1:] if l)
if vals != src:
    print("raw values differ", len(vals), len(src)); bad += 1
note = " ".join(r[0] for r in raw[:top])
if raw[top][:3] != ["arm", "round", "seq"] or \
        "sheet_sha256 = %s;" % a["sheet_sha256"] not in note or \
        "workload = imported;" not in note:
    print("raw header", raw[:top + 1]); bad += 1
sys.exit(1 if bad else 0)
EOF
check "xlsx numbers equal analyze --json" python3 cmp.py

# Headless Chromium: a real page with its tables and the inline plot.
chrome() {
  chromium --headless --no-sandbox --disable-gpu \
    --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --user-data-dir="$(mktemp -d -p "$W")" "$@" \
    2>>chrome.log
}
chrome --screenshot="$W/shot.png" --window-size=1200,3000 \
  "file://$W/$R/report.html" >/dev/null
check "screenshot written" test -s shot.png
check "screenshot is not blank" python3 - <<'EOF'
import struct, zlib
d = open("shot.png", "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n"
w, h = struct.unpack(">II", d[16:24])
# Decode the image and count distinct pixel rows: a blank page has one.
pos, idat = 8, b""
while pos < len(d):
    n, = struct.unpack(">I", d[pos:pos + 4]); t = d[pos + 4:pos + 8]
    if t == b"IDAT": idat += d[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(idat)
stride = len(raw) // h
rows = set(raw[i * stride + 1:(i + 1) * stride] for i in range(h))
assert w == 1200 and len(rows) > 200, (w, h, len(rows))
EOF
chrome --dump-dom "file://$W/$R/report.html" >dom.html
n_tables=$(grep -o "<table>" dom.html | wc -l)
check "DOM has the tables (4 or more)" test "$n_tables" -ge 4
check "DOM has every table of the page" test "$n_tables" = "$(grep -o "<table>" $R/report.html | wc -l)"
check "DOM has the plots inline" test "$(grep -c '<span class="plot"><svg xmlns=' dom.html)" = 2
check "DOM has no script element" bash -c "! grep -q '<script' dom.html"
check "DOM shows the title as text" grep -qF 'Report &lt;script&gt;alert(1)&lt;/script&gt; | test' dom.html

# An amendment after the data: Deviations shows it, with its timing, the
# diff (a fence longer than the backticks in it) and the workloads touched.
python3 - <<'EOF'
p = "protocols/rep.lua"
s = open(p).read()
s = s.replace('threats = { "Synthetic data: the numbers mean nothing." },',
  'threats = { "Synthetic data: the numbers mean nothing." },\n'
  '  amendments = {\n    { date = "2026-10-22", why = "Stricter ```slower```." },\n  },')
s = s.replace('ratio_above = 1.10', 'ratio_above = 1.25')
open(p, "w").write(s)
EOF
check "amend" "$PREREG" amend $S --data d
check "report after amend" "$PREREG" report $S --data d
for s in '**Amendment 1**, dated 2026-10-22' \
  'after 28 runs had been collected' \
  'Stricter \`\`\`slower\`\`\`.' 'Its diff is in provenance.md' \
  'all workloads (decision rule changed)' 'sheet version 1, 1 amendment' \
  'At the registered sample and rule (version 0), given because amendment 1'; do
  check "amended md has $s" grep -qF -- "$s" $md
done
for s in '### Amendment 1' '````diff' \
  '+      { "slower", ci_excludes = 1, ratio_above = 1.25 },'; do
  check "provenance.md has $s" grep -qF -- "$s" $R/provenance.md
done

# Tampered data: refused, naming the file; --force stamps every page.
csvf=$(ls d/rep-test/batches/*.csv | head -1)
chmod u+w "$csvf"
# Change one measurement, keeping the row well-formed.
sed -i '0,/,0\.101,/s//,0.199,/' "$csvf"
"$PREREG" report $S --data d --out tampered >out.txt 2>err.txt
check "unverified data refused with exit 1" test $? = 1
check "refusal names the file" grep -qF "$(basename "$csvf")" err.txt
check "nothing written when refused" test ! -e tampered/report.md
"$PREREG" report $S --data d --out forced --force >out.txt 2>err.txt
check "--force writes the report" test $? = 0
check "md stamped UNVERIFIED" grep -q '^> \*\*UNVERIFIED' forced/report.md
check "html stamped UNVERIFIED" grep -q 'class="unverified"' forced/report.html
mkdir xf
HOME=$W/lohome libreoffice --headless --convert-to \
  'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1' \
  --outdir xf forced/report.xlsx >>lo.log 2>&1
for sh in Summary Hypotheses Deviations Raw Processes Provenance; do
  check "xlsx $sh stamped" grep -q '^"\?UNVERIFIED' xf/report-$sh.csv
done

# The sheet says interleaved, the data says otherwise: an arm collected
# after the reference (imported apart here; an arm added later or a rerun
# with --only does the same) is a detected threat; interleaved data is not.
check "interleaved data: no such threat" bash -c "! grep -q 'Not interleaved' $md"
sed -e 's/id = "rep-test"/id = "late-arm"/' $S >protocols/late.lua
check "register late" "$PREREG" register protocols/late.lua --data d
{
  echo "workload,arm,metric,value,run,started_at"
  for i in 1 2 3 4 5 6; do
    echo "imported,bare,wall_s,0.10$i,$i,2026-10-21T08:0$i:10Z"
    echo "imported,slow,wall_s,0.12$i,$i,2026-10-21T08:0$i:20Z"
  done
} >first.csv
{
  echo "workload,arm,metric,value,run,started_at"
  for i in 1 2 3 4 5 6; do echo "imported,bwrap,wall_s,0.31$i,$i,2026-10-22T09:0$i:00Z"; done
} >later.csv
check "import first" "$PREREG" import protocols/late.lua first.csv --data d
check "import later" "$PREREG" import protocols/late.lua later.csv --data d
check "report late" "$PREREG" report protocols/late.lua --data d --out late
check "not interleaved: named" grep -qF 'Not interleaved: all runs of arm bwrap on workload imported were collected after those of the reference arm bare' late/report.md
check "not interleaved: only that arm" test "$(grep -c 'Not interleaved' late/report.md)" = 1
# Without start times a CSV's order is not the collection order (it may
# list the rows by arm): no claim either way.
sed -e 's/id = "rep-test"/id = "no-times"/' $S >protocols/notimes.lua
check "register no-times" "$PREREG" register protocols/notimes.lua --data d
cut -d, -f1-5 first.csv >nt.csv
tail -n +2 later.csv | cut -d, -f1-5 >>nt.csv
check "import no-times" "$PREREG" import protocols/notimes.lua nt.csv --data d
check "report no-times" "$PREREG" report protocols/notimes.lua --data d --out nt
check "no times: no interleaving claim" bash -c "! grep -q 'Not interleaved' nt/report.md"

# Usage errors exit 2.
"$PREREG" report --data d >/dev/null 2>&1
check "no sheet: exit 2" test $? = 2

done_testing 80
