#!/usr/bin/env bash
# status_cli.sh: what the reader is told when the data are not the plan,
# through the real binary. A run interrupted part way and a --quick run:
# the status line first in `analyze`, a "status" object in --json, at the
# top of report.md, report.html and the XLSX Summary, and every verdict and
# hypothesis outcome labelled provisional (JSON: "provisional": true, the
# verdict strings unchanged). Runs raised by an amendment after data: the
# verdicts at the registered sample beside the amended ones, in the JSON
# and the report, saying which changed; an arm an amendment added, said
# to be beyond the registered plan. Each notice at the top of report.md
# (every flag of the status line in words; runs past the plan; a frozen
# CSV edited, written with --force: what verify found) under the XLSX
# Summary's status line in the same words, and under the title of every
# SVG plot (a plot shared on its own says so too); a report of a complete
# run shows no notice in any plot. The verdicts those assert come
# from imported values, never from the machine's speed.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
T=$(mktemp -d /tmp/prereg-status-cli.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1

write_sheet() { # write_sheet ID NAP RUNS AMENDMENT...
  local id=$1 nap=$2 runs=$3
  shift 3
  {
    cat <<LUA
protocol {
  id = "$id", title = "Status", question = "Does a nap cost?", author = "t",
  arms = { { name = "bare", reference = true },
           { name = "nap", run = "sleep $nap && {cmd}" } },
  workloads = { { name = "start", runs = $runs, cmd = "sleep $nap",
                  metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 500, seed = 7,
           verdicts = { { "slower", ci_excludes = 1, ratio_above = 1.2 } } },
  hypotheses = { { id = "H1", says = "a nap costs", workload = "start",
                   metric = "wall_s", arms = { "nap" }, claim = at_least(1.2) } },
  amendments = {
LUA
    for a in "$@"; do echo "    $a,"; done
    printf '  },\n}\n'
  } >"$id.lua"
}

# import_sheet ID RUNS [ARM3] [AMENDMENT...]: the same experiment with
# nothing to run (its values come by prereg import); ARM3 (or "") a third
# arm.
import_sheet() {
  local id=$1 runs=$2 arm3=${3:-}
  shift 3
  {
    cat <<LUA
protocol {
  id = "$id", title = "Status", question = "Does a nap cost?", author = "t",
  arms = { { name = "bare", reference = true }, { name = "nap" },
           ${arm3:+{ name = \"$arm3\" \},} },
  workloads = { { name = "start", runs = $runs, metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 500, seed = 7,
           verdicts = { { "slower", ci_excludes = 1, ratio_above = 1.2 } } },
  hypotheses = { { id = "H1", says = "a nap costs", workload = "start",
                   metric = "wall_s", arms = { "nap" }, claim = at_least(1.2) } },
  amendments = {
LUA
    for a in "$@"; do echo "    $a,"; done
    printf '  },\n}\n'
  } >"$id.lua"
}
# values FILE ARM VALUE RUN...: a CSV of ARM's wall_s for each RUN: VALUE
# plus 0.01 for each run before it in the list (values with a spread; one
# of no spread has no interval).
values() {
  local f=$1 arm=$2 v=$3 i=0
  shift 3
  [ -s "$f" ] || echo "workload,arm,metric,value,run" >"$f"
  for r in "$@"; do
    echo "start,$arm,wall_s,$(awk "BEGIN { print $v + $i * 0.01 }"),$r" >>"$f"
    i=$((i + 1))
  done
}

# provisional_everywhere NAME SHEET STATUS-PATTERN: the status and the
# provisional labels in analyze, --json, report.md, report.html and XLSX.
provisional_everywhere() {
  local name=$1 sheet=$2 pat=$3
  "$PREREG" analyze "$sheet" >table.txt 2>&1 || bad "$name: analyze failed"
  check_grep "$name: status first in analyze" \
    "^status: $pat \(verdicts are provisional\)$" "$(head -n 1 table.txt)"
  # The matrix: the verdict, and under it its mark.
  check_grep "$name: table verdict provisional" \
    "\] (slower|inconclusive)(, n=[0-9]+)?@ +\(provisional\)@" "$(grep -A1 '× \[' table.txt | tr '\n' '@')"
  check_grep "$name: table outcome provisional" "H1  [a-z ]+ \(provisional\): a nap costs" "$(cat table.txt)"
  "$PREREG" analyze "$sheet" --json >a.json 2>&1 || bad "$name: analyze --json failed"
  check "$name: JSON status and provisional" python3 - a.json "$pat" <<'PY'
import json, re, sys
j = json.load(open(sys.argv[1]))
st = j["status"]
assert re.fullmatch(sys.argv[2], st["line"]), st
assert st["complete"] is False and "INCOMPLETE" in st["flags"], st
assert st["collected"] < st["planned"] == 20, st
assert j["provisional"] is True
for r in j["results"] + j["hypotheses"]:
    assert r["provisional"] is True, r
    assert r["verdict"] in ("slower", "inconclusive", "held", "not held"), r
assert list(j)[:5] == ["protocol", "sheet_sha256", "rule", "results",
                       "hypotheses"]
PY
  "$PREREG" report "$sheet" --out "rep-$name" >/dev/null 2>&1 || bad "$name: report failed"
  check_grep "$name: report.md status, its first line" "^> \*\*Status: $pat\.\*\*" \
    "$(sed -n 1p "rep-$name/report.md")"
  has "rep-$name/report.md" "$name: report.md says provisional" \
    "The verdicts and hypothesis outcomes below are **provisional**"
  check_grep "$name: report.md verdict provisional, in the matrix" \
    '^\| start · wall_s \| .* · [0-9.]+× \[[0-9.]+–[0-9.]+\] \*\*[a-z]+\*\* \(provisional\) \|$' \
    "$(cat "rep-$name/report.md")"
  check_grep "$name: report.md hypothesis provisional" \
    '^- H1 \*\*[a-z ]+\*\* \(provisional\): a nap costs' "$(cat "rep-$name/report.md")"
  has "rep-$name/report.html" "$name: report.html status" "<strong>Status: "
  check_grep "$name: XLSX Summary status, its top row" \
    "^Status: $pat \(verdicts are provisional\)$" "$(xlsx_text "rep-$name/report.xlsx" 1 | sed -n 1p)"
  check_grep "$name: XLSX verdict provisional" "^(slower|inconclusive) \(provisional\)$" \
    "$(xlsx_text "rep-$name/report.xlsx" 1)"
}

# notice_in_xlsx DIR HEADING...: each notice report.md shows at its top
# under HEADING (a line of the status quote, "> - HEADING: ...", or a
# quote of its own, "> **HEADING.** ..."), in the XLSX Summary under its
# status line in the same words: code spans as plain text, "(see S)" as
# "(see S in report.md or report.html)", and a list under the notice as
# "- ITEM" rows. One check a heading.
notice_in_xlsx() {
  local dir=$1 h
  shift
  for h in "$@"; do
    check "$dir: $h at the top of report.md and under the XLSX status line" \
      python3 - "$dir" "$h" <<'PY'
import html, re, sys, zipfile
d, h = sys.argv[1], sys.argv[2]
md = open(d + "/report.md").read().split("\n## ", 1)[0].split("\n")
want = []
for i, l in enumerate(md):
    if l.startswith("> - %s: " % h) or l.startswith("> **%s.** " % h):
        t = h + ": " + l.split(": " if l.startswith("> - ") else ".** ", 1)[1]
        t = re.sub(r" \(see ([^()]*)\)\.$", r" (see \1 in report.md or report.html).", t)
        want.append(t.replace("`", ""))
        if t.endswith(":"):  # its list, one item a line
            for item in md[i + 1:]:
                if not item.startswith(">"):
                    break
                if item.startswith("> - "):
                    want.append("- " + re.sub(r"\\(.)", r"\1", item[4:]))
assert want, "report.md has no notice %s" % h
sheet = zipfile.ZipFile(d + "/report.xlsx").read("xl/worksheets/sheet1.xml").decode()
rows = [html.unescape(t) for t in re.findall(
    r'<c [^>]*t="inlineStr"><is><t[^>]*>(.*?)</t></is></c>', sheet, re.S)]
assert rows[0].startswith("Status: "), rows[:2]
# Between the status line and the sheet's title ("Status"), cut into
# rows at spaces.
top = " ".join(rows[1:rows.index("Status", 1)])
for w in want:
    assert w in top, "not under the XLSX status line: %r\nrows: %r" % (w, rows[:12])
PY
  done
}

# Every notice heading report_notices can give.
HEADINGS="INCOMPLETE|QUICK|INTERRUPTED|BEYOND PLAN|IMPORTED|AMENDED AFTER DATA"
HEADINGS="$HEADINGS|INPUTS CHANGED|UNVERIFIED|RULE CHANGED AFTER THE PLAN"

# notices_in_svg DIR HEADING...: every plot in DIR (the overview and one
# per workload and metric) shows each HEADING under its title, in bold
# ("<tspan font-weight="bold">HEADING</tspan>: ..."), one line a notice,
# and what follows the title is moved down by those lines (a <g> shifted
# by 17 px a line): nothing drawn over them. One check for them all.
notices_in_svg() {
  local dir=$1
  shift
  check "$dir: every plot shows $* under its title" python3 - "$dir" "$@" <<'PY'
import glob, re, sys
import xml.etree.ElementTree as ET
d, heads = sys.argv[1], sys.argv[2:]
ns = "{http://www.w3.org/2000/svg}"
svgs = sorted(glob.glob(d + "/*.svg"))
assert d + "/overview.svg" in svgs and len(svgs) >= 2, svgs
for f in svgs:
    root = ET.parse(f).getroot()  # well-formed: the text escaped
    texts = root.findall(ns + "text")  # the title, then the notes
    notes = [t for t in texts[1:] if t.find(ns + "tspan") is not None]
    shown = [n.find(ns + "tspan").text for n in notes
             if n.find(ns + "tspan").get("font-weight") == "bold"]
    for h in heads:
        assert h in shown, "%s: %s not under the title: %r" % (f, h, shown)
    for n in notes:
        assert len(n.find(ns + "tspan").tail) > 4, (f, n.find(ns + "tspan").tail)
    g = root.findall(ns + "g")
    assert len(g) == 1 and g[0].get("transform") == \
        "translate(0 %.1f)" % (17 * len(notes)), (f, [x.attrib for x in g])
    assert float(root.get("height")) > 17 * len(notes) + 100, f
PY
}

# no_notice_in_svg DIR: no plot in DIR names a notice or moves its body.
no_notice_in_svg() {
  check "$1: no plot shows a notice" sh -c \
    '! grep -E -l "'"$HEADINGS"'|<g transform" "$1"/*.svg' sh "$1"
}

# a complete run: no notice at the top of report.md, none in a plot
write_sheet clean 0.01 3
"$PREREG" register clean.lua >/dev/null || bad "register clean"
"$PREREG" run clean.lua >/dev/null 2>&1 || bad "run clean"
"$PREREG" report clean.lua --out rep-clean >/dev/null 2>&1 || bad "report clean"
check "complete run: report.md has no notice" sh -c \
  '! grep -E -q "^> (- |\*\*)('"$HEADINGS"')" rep-clean/report.md'
check "complete run: plots written" test -s rep-clean/overview.svg
no_notice_in_svg rep-clean

# interrupted part way
# Its naps last as long as nap.s says when they start: 0.1 s, or 300 s
# once the SIGTERM is due, so that the plan cannot end before it however
# slow the machine is.
echo 0.1 >nap.s
write_sheet cut "\$(cat $PWD/nap.s)" 10
"$PREREG" register cut.lua >/dev/null || bad "register cut"
"$PREREG" run cut.lua >/dev/null 2>run.err &
pid=$!
# Interrupted once some runs are frozen (6 rounds: enough for a 95%
# interval), however fast they go here.
for _ in $(seq 600); do
  [ "$(cat data/cut/batches/*.csv 2>/dev/null | wc -l)" -ge 13 ] && break
  sleep 0.1
done
echo 300 >nap.s
check "cut: SIGTERM sent while the run goes on" kill -0 $pid
kill -TERM $pid
wait $pid
check_grep "the run was interrupted" "interrupted; [0-9]+ runs kept" "$(cat run.err)"
provisional_everywhere interrupted cut.lua 'INCOMPLETE \([0-9]+/20\) · INTERRUPTED'
notice_in_xlsx rep-interrupted INCOMPLETE INTERRUPTED
notices_in_svg rep-interrupted INCOMPLETE INTERRUPTED

# a --quick run
write_sheet quick 0.02 10
"$PREREG" register quick.lua >/dev/null || bad "register quick"
"$PREREG" run quick.lua --quick >/dev/null 2>&1 || bad "run --quick"
provisional_everywhere quick quick.lua 'INCOMPLETE \(10/20\) · QUICK'
notice_in_xlsx rep-quick INCOMPLETE QUICK
notices_in_svg rep-quick INCOMPLETE QUICK

# runs raised by an amendment after data
# Five runs each where nap takes twice bare's time (slower at the
# registered sample), then five more where both take the same: at ten,
# nap's median is about 1.5x and its interval reaches 1 (inconclusive).
import_sheet more 5 ""
"$PREREG" register more.lua >/dev/null || bad "register more"
values v0.csv bare 1.0 r1 r2 r3 r4 r5 && values v0.csv nap 2.0 r1 r2 r3 r4 r5
"$PREREG" import more.lua v0.csv >/dev/null 2>&1 || bad "import more"
import_sheet more 10 "" \
  '{ date = "2026-10-22", why = "Five runs were too few; ten." }'
"$PREREG" amend more.lua >/dev/null || bad "amend more"
values v1.csv bare 1.0 r6 r7 r8 r9 r10 && values v1.csv nap 1.0 r6 r7 r8 r9 r10
"$PREREG" import more.lua v1.csv >/dev/null 2>&1 || bad "import more v1"
"$PREREG" analyze more.lua --json >m.json 2>&1 || bad "analyze more"
check "raised runs: both verdicts in the JSON" python3 - m.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["status"]["line"] == "IMPORTED · AMENDED AFTER DATA", j["status"]
assert j["provisional"] is False
r = j["results"][0]
assert r["n"] == 10 and r["n_reference"] == 10, r
assert r["verdict"] == "inconclusive" and 1.4 < r["ratio"] < 1.6, r
g = r["registered"]
assert g is not None and g["n"] == 5 and g["n_reference"] == 5, g
assert g["verdict"] == "slower" and 1.9 < g["ratio"] < 2.0 and "ci_low" in g, g
h = j["hypotheses"][0]
assert h["registered"] is not None and h["registered"]["verdict"] == "held", h
rs = j["registered_sample"]
assert "raised runs of start from 5 to 10" in rs["why"], rs
assert j["original"] is not None and "raised runs" in j["original_why"]
assert rs["verdicts_changed"] == [
    {"workload": "start", "metric": "wall_s", "arm": "nap",
     "verdict": "inconclusive", "registered": "slower"}], rs
PY
"$PREREG" analyze more.lua >table.txt 2>&1
check_grep "raised runs: status first" "^status: IMPORTED · AMENDED AFTER DATA$" "$(head -n 1 table.txt)"
"$PREREG" report more.lua --out rep-more >/dev/null 2>&1 || bad "report more"
# Beside the matrix, a line says the registered sample decides the
# comparison and the hypothesis otherwise; under Deviations, the
# comparison with both n.
check_grep "report: the registered sample against the amended, after the matrix" \
  '^2 verdicts or outcomes differ at the registered sample and rule' \
  "$(cat rep-more/report.md)"
has rep-more/report.md "report: registered section" \
  "At the registered sample and rule (version 0), given because amendment 1"
has rep-more/report.md "report: says what changed" "raised runs of start from 5 to 10"
check_grep "report: which changed" \
  '^\| start · wall_s · nap \| inconclusive \(n=10\) \| slower \(n=5\) \|$' \
  "$(cat rep-more/report.md)"
has rep-more/report.md "report: the changed verdict is marked in the matrix" \
  "**changed**: at the registered sample (n=5)"
notice_in_xlsx rep-more IMPORTED "AMENDED AFTER DATA"
notices_in_svg rep-more IMPORTED "AMENDED AFTER DATA"

# runs past the plan: three runs planned, five imported
import_sheet over 3 ""
"$PREREG" register over.lua >/dev/null || bad "register over"
values o.csv bare 1.0 r1 r2 r3 r4 r5 && values o.csv nap 2.0 r1 r2 r3 r4 r5
"$PREREG" import over.lua o.csv >/dev/null 2>&1 || bad "import over"
"$PREREG" report over.lua --out rep-over >/dev/null 2>&1 || bad "report over"
check_grep "runs past the plan: the status says so" '^> \*\*Status: .*BEYOND PLAN' \
  "$(sed -n 1p rep-over/report.md)"
notice_in_xlsx rep-over "BEYOND PLAN"
notices_in_svg rep-over IMPORTED "BEYOND PLAN"

# a frozen CSV edited by hand: the report refused, then written with
# --force, what verify found at its top in report.md and the XLSX
csv=$(ls data/over/batches/*.csv | head -n 1)
chmod u+w "$csv" && sed -i 's/,2\.01,/,1.01,/' "$csv"
check "the CSV edited" grep -q ',1\.01,' "$csv"
expect 1 "edited data: no report without --force" "$PREREG" report over.lua --out rep-edited
"$PREREG" report over.lua --out rep-edited --force >/dev/null 2>&1 || bad "report --force"
notice_in_xlsx rep-edited UNVERIFIED
notices_in_svg rep-edited IMPORTED "BEYOND PLAN" UNVERIFIED
check_grep "edited data: the XLSX names the edited file under the status line" \
  "^- .*$(basename "$csv")" "$(xlsx_text rep-edited/report.xlsx 1 | sed -n '2,/^Status$/p')"

# an arm added by an amendment after data
# Version 0 has no such arm: its comparisons have no registered verdict
# to change. They are said to be beyond the registered plan, never
# counted or marked as changed.
import_sheet added 3 ""
"$PREREG" register added.lua >/dev/null || bad "register added"
values w0.csv bare 1.0 r1 r2 r3 && values w0.csv nap 2.0 r1 r2 r3
"$PREREG" import added.lua w0.csv >/dev/null 2>&1 || bad "import added"
import_sheet added 4 nap2 \
  '{ date = "2026-10-22", why = "A longer nap as a third arm; four runs." }'
check_grep "added arm: the sheet has it" 'name = "nap2"' "$(cat added.lua)"
"$PREREG" amend added.lua >/dev/null 2>&1 || bad "amend added"
values w1.csv bare 1.0 r4 && values w1.csv nap 2.0 r4
values w1.csv nap2 5.0 r1 r2 r3 r4
"$PREREG" import added.lua w1.csv >/dev/null 2>&1 || bad "import added v1"
"$PREREG" analyze added.lua --json >a2.json 2>&1 || bad "analyze added"
check "added arm: not_registered, never verdicts_changed" python3 - a2.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rs = j["registered_sample"]
assert rs is not None, j
nr = [(e["workload"], e["metric"], e["arm"]) for e in rs["not_registered"]]
assert nr == [("start", "wall_s", "nap2")], nr
assert all(e["arm"] != "nap2" for e in rs["verdicts_changed"]), rs
PY
"$PREREG" analyze added.lua >table.txt 2>&1
check_grep "added arm: the matrix says it" "not in the registered plan" "$(cat table.txt)"
check "added arm: the matrix never says 'registered: no comparison'" \
  sh -c '! grep -q "registered: no comparison" table.txt'
"$PREREG" report added.lua --out rep-added >/dev/null 2>&1 || bad "report added"
has rep-added/report.md "added arm: the report's verdict" "; not in the registered plan"
has rep-added/report.md "added arm: one line under the matrix" \
  "1 comparison is not in the registered plan: version 0's sheet does not have its arm"
check "added arm: never marked changed in the report" \
  sh -c '! grep -q "changed\*\*: at the registered sample no comparison" rep-added/report.md'
check "added arm: the workbook's registered column says it" python3 -c '
import sys, zipfile
z = zipfile.ZipFile("rep-added/report.xlsx")
sys.exit(0 if any(b"not in the registered plan" in z.read(n)
                  for n in z.namelist() if n.startswith("xl/worksheets/")) else 1)'

done_testing 59
