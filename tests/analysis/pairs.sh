#!/usr/bin/env bash
# pairs.sh: every pair of arms when the rule asks for it (pairs = "all",
# registered) or analyze --pairs (exploratory, said so at the top): each
# later arm against each earlier one, under the same rule, in the matrix's
# Pairs block, the run-style summary lines and the JSON (the pair's
# earlier arm as its reference), keyed by its reference too. Values are
# fabricated and imported, so the verdicts do not depend on the machine.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"

T=$(mktemp -d /tmp/prereg-pairs-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T"

sheet() { # sheet FILE PAIRS-KEY
  cat > "$1" <<LUA
protocol {
  id = "${1%.lua}", title = "Pairs", question = "Is zstd faster than xz?",
  author = "t",
  arms = {
    { name = "gzip", reference = true, run = "gzip -6 {cmd}" },
    { name = "xz", run = "xz -2 {cmd}" },
    { name = "zstd", run = "zstd -3 {cmd}" },
  },
  workloads = { { name = "text", runs = 8, metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 1000,
           seed = 5, $2
           verdicts = { { "faster", ratio_below = 1, ci_excludes = 1 },
                        { "slower", ratio_above = 1, ci_excludes = 1 } } },
}
LUA
}
{
  echo "workload,arm,metric,value"
  for r in 1 2 3 4 5 6 7 8; do
    echo "text,gzip,wall_s,1.$r"
    echo "text,xz,wall_s,3.$r"
    echo "text,zstd,wall_s,0.2$r"
  done
} > values.csv

sheet all.lua 'pairs = "all",'
expect 0 "check a sheet with pairs = all" "$PREREG" check all.lua
check_grep "check names the pairs" '^Pairs +all: each later arm against each earlier one' "$out"
"$PREREG" register all.lua --data d >/dev/null || bad "register"
expect 0 "import the fabricated values" "$PREREG" import all.lua values.csv --data d
expect 0 "analyze --json" "$PREREG" analyze all.lua --data d --json
printf '%s' "$out" > all.json
python3 - all.json <<'PY' && ok || bad "the pair's verdict in --json"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["pairs"] == "registered", j.get("pairs")
pairs = [r for r in j["results"] if r.get("pair")]
assert len(pairs) == 1, pairs
p = pairs[0]
assert (p["arm"], p["reference"]) == ("zstd", "xz"), p
assert p["exploratory"] is False, p
assert p["verdict"] == "faster", p
assert abs(p["ratio"] - 0.245 / 3.45) < 1e-12, p["ratio"]
assert p["ci_high"] < 1, p
# The reference comparisons are unchanged, each against gzip.
ref = {(r["arm"], r["reference"]): r["verdict"] for r in j["results"]
       if not r.get("pair")}
assert ref == {("xz", "gzip"): "slower", ("zstd", "gzip"): "faster"}, ref
PY
expect 0 "analyze" "$PREREG" analyze all.lua --data d
check_grep "the matrix has a Pairs block" '^Pairs \(each later arm against each earlier one, the same rule\)$' "$out"
check_grep "the pair in words, the way round the report and JSON have it" \
  '^  text · wall_s  zstd  0\.0710× \[0\.0[0-9]+–0\.0[0-9]+\] of xz, -3\.21 s \[-3\.[0-9]+, -[23]\.[0-9]+\]:$' "$out"
check "registered pairs are not called exploratory" \
  test "$(grep -c exploratory <<<"$out")" -eq 0

# The report: the pair in a table under the matrix, in the HTML, and on
# the workbook's Pairs sheet with its reference named.
expect 0 "report" "$PREREG" report all.lua --data d --out rep
check_grep "report.md: the pair's row" \
  '^\| text · wall.?_s \| zstd \| xz \| 0\.0710× \[[0-9.]+–[0-9.]+\] \| \*\*faster\*\* \|$' \
  "$(cat rep/report.md)"
check_grep "report.html: the pair" '<td>zstd</td>' \
  "$(grep -A14 'Pairs, each later arm' rep/report.html)"

python3 - rep/report.xlsx <<'PY' && ok || bad "report.xlsx: the pair on a Pairs sheet"
import re, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
book = z.read("xl/workbook.xml").decode()
names = re.findall(r'<sheet name="([^"]+)"', book)
assert "Pairs" in names, names
sheet = z.read("xl/worksheets/sheet%d.xml" % (names.index("Pairs") + 1)).decode()
# Strings inline (constant-memory mode) or shared, numbers in <v>.
shared = []
if "xl/sharedStrings.xml" in z.namelist():
    shared = [re.sub(r"<[^>]+>", "", s) for s in re.findall(
        r"<si>(.*?)</si>", z.read("xl/sharedStrings.xml").decode(), re.S)]
def row(n):
    cells = {}
    for ref, attrs, body in re.findall(
            r'<c r="([A-Z]+)%d"([^>]*)>(.*?)</c>' % n, sheet, re.S):
        if 't="inlineStr"' in attrs:
            cells[ref] = re.sub(r"<[^>]+>", "", body)
            continue
        v = re.search(r"<v>(.*?)</v>", body).group(1)
        cells[ref] = shared[int(v)] if 't="s"' in attrs else float(v)
    return cells
rows = [row(n) for n in range(1, 10)]
hit = [r for r in rows if r.get("C") == "zstd" and r.get("D") == "xz"]
assert len(hit) == 1, rows
p = hit[0]
assert p["A"] == "text" and p["B"] == "wall_s", p
assert abs(p["E"] - 0.245 / 3.45) < 1e-12, p
assert p["G"] < 1 and p["K"] == "faster", p
# The difference, zstd's median minus xz's, in seconds, inside its CI.
assert abs(p["H"] - (0.245 - 3.45)) < 1e-12, p
assert p["I"] <= p["H"] <= p["J"] < 0, p
assert any(r.get("D") == "Against" for r in rows), rows
PY

# Without pairs in the rule, analyze --pairs: the same pair, exploratory,
# said at the top.
sheet plain.lua ''
"$PREREG" register plain.lua --data d >/dev/null || bad "register plain"
"$PREREG" import plain.lua values.csv --data d >/dev/null || bad "import plain"
expect 0 "analyze without --pairs" "$PREREG" analyze plain.lua --data d --json
check "without --pairs no pair" test "$(grep -c '"pair"' <<<"$out")" -eq 0
expect 0 "analyze --pairs" "$PREREG" analyze plain.lua --data d --pairs
check_grep "said exploratory under the status line" \
  '^status: .*
exploratory: analyze --pairs adds 1 comparison of pairs of arms that the registered rule does not make$' \
  "$(head -2 <<<"$out")"
check_grep "the block says it too" '^Pairs .*exploratory: not registered\)$' "$out"
expect 0 "analyze --pairs --json" "$PREREG" analyze plain.lua --data d --pairs --json
printf '%s' "$out" > plain.json
python3 - plain.json <<'PY' && ok || bad "--pairs --json: the pair, exploratory"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["pairs"] == "exploratory"
p = [r for r in j["results"] if r.get("pair")]
assert len(p) == 1 and p[0]["exploratory"] is True and p[0]["verdict"] == "faster", p
PY

# An amendment adding pairs after data: the pair is not in the registered
# plan, keyed with its reference.
sheet plain.lua 'pairs = "all",'
sed -i 's/^}$/  amendments = { { date = "2026-11-02", why = "Compare xz and zstd too." } },\n}/' plain.lua
expect 0 "amend to add pairs" "$PREREG" amend plain.lua --data d
expect 0 "analyze --json after the amendment" "$PREREG" analyze plain.lua --data d --json
printf '%s' "$out" > amended.json
python3 - amended.json <<'PY' && ok || bad "the added pair is not registered"
import json, sys
j = json.load(open(sys.argv[1]))
rs = j["registered_sample"]
assert rs, "no registered_sample"
nr = rs["not_registered"]
assert {"workload": "text", "metric": "wall_s", "arm": "zstd",
        "reference": "xz"} in nr, nr
p = [r for r in j["results"] if r.get("pair")][0]
assert p["registered"] is None, p
PY

sheet bad.lua 'pairs = "some",'
expect 2 "pairs must be all" "$PREREG" check bad.lua
check_grep "the message says what pairs takes" 'rule.pairs: must be "all"' "$out"
done_testing 24
