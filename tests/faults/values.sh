#!/usr/bin/env bash
# values.sh: input that would freeze bad text or wrong numbers: bytes that
# are not UTF-8 in a sheet or an imported note, imported values the run
# would never record (negative times, underflow to 0, hex floats, a
# run number past 64 bits, a started_at with garbage after it, duplicate
# JSON keys), verdicts from one value per arm, ratios that overflow; and
# the messages: a hyperfine file with a BOM, a second run while one runs.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/lib.sh"
# The terminal summary wraps its prose to the width: one line per reason.
export COLUMNS=400

cat >s.lua <<'LUA'
protocol {
  id = "vl", title = "Values", question = "Are they right?", author = "t",
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = {
    { name = "imp", metrics = { "wall_s", "pss_mib", "score" } },
    { name = "slow", runs = 30, cmd = "sleep 0.2" },
    { name = "neg", runs = 1, metrics = { "wall_s", "inner_s" },
      cmd = "sh -c 'echo inner_s=-1 > \"$PREREG_METRICS\"'" },
    { name = "hex", runs = 1, metrics = { "wall_s", "inner_s" },
      cmd = "sh -c 'echo inner_s=0x1p3 > \"$PREREG_METRICS\"'" },
    { name = "bytes", runs = 3,
      cmd = "sh -c 'printf \"\\\\377\\\\376=1\\\\n\" > \"$PREREG_METRICS\"'" },
  },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 3,
           verdicts = { { "slower", ci_excludes = 1, ratio_above = 1 },
                        { "faster", ci_excludes = 1, ratio_below = 1 } } },
  hypotheses = {
    { id = "H1", says = "b is faster", workload = "imp", metric = "wall_s",
      arms = { "b" }, claim = verdict_is("faster") },
  },
}
LUA
fresh() {
  D=$T/data-$1
  E=$D/vl
  "$PREREG" register s.lua --data "$D" >/dev/null || bad "$1: register"
}
csv() { printf 'workload,arm,metric,value%s\n' "$1"; shift; printf '%s\n' "$@"; }
# refused WHAT PATTERN FILE: import exits 2 naming the line, nothing is
# imported.
refused() {
  expect 2 "$1: refused" "$PREREG" import s.lua "$3" --data "$D"
  check_grep "$1: says where and why" "$2" "$out"
  check "$1: nothing imported" test ! -e "$E/batches"
}

scenario "a sheet with bytes that are not UTF-8"
printf -- '-- caf\xe9\n' >bad-text.lua
cat s.lua >>bad-text.lua
expect 2 "text: check refuses" "$PREREG" check bad-text.lua
check_grep "text: file, line, byte offset" "bad-text.lua:1: not valid UTF-8 at byte offset 6" "$out"
sed 's/title = "Values"/title = "Val\\xffues"/' s.lua >bad-string.lua
expect 2 "string: check refuses" "$PREREG" check bad-string.lua
check_grep "string: file, line, field, byte" "bad-string.lua:2: title: is not valid UTF-8 \(at byte 4" "$out"
expect 2 "string: register refuses" "$PREREG" register bad-string.lua --data "$T/data-u"
check "string: nothing registered" test ! -e "$T/data-u/vl"

scenario "an imported note that is not UTF-8"
fresh 1
csv ',note' 'imp,a,wall_s,1.0,ok' "$(printf 'imp,b,wall_s,2.0,caf\xe9')" >note.csv
refused "note" "note.csv:3: note: not valid UTF-8 at byte 4 of field 5" note.csv
# The same note as UTF-8 is kept, and what is frozen reads back.
csv ',note' 'imp,a,wall_s,1.0,ok' 'imp,b,wall_s,2.0,café' >note8.csv
expect 0 "UTF-8 note: imported" "$PREREG" import s.lua note8.csv --data "$D"
check "UTF-8 note: kept in the batch facts" grep -q 'café' "$E/batches/b0001.json"
expect 0 "UTF-8 note: analyze --json" "$PREREG" analyze s.lua --data "$D" --json

scenario "imported values the run would never record"
fresh 2
csv '' 'imp,a,wall_s,1' 'imp,a,wall_s,1.2' 'imp,a,wall_s,1.1' 'imp,b,wall_s,-1' 'imp,b,wall_s,-2' 'imp,b,wall_s,-1.5' >neg.csv
refused "negative time" "neg.csv:5: value -1: wall_s is a time or an amount of memory, which cannot be negative" neg.csv
csv '' 'imp,a,pss_mib,-3' >negmem.csv
refused "negative memory" "negmem.csv:2: value -3: pss_mib" negmem.csv
csv '' 'imp,a,wall_s,1e-400' >tiny.csv
refused "underflow" "tiny.csv:2: value '1e-400' is not a finite number \(too small" tiny.csv
csv '' 'imp,a,wall_s,0x1p3' >hex.csv
refused "hex float" "hex.csv:2: value '0x1p3' is not a finite number \(a hexadecimal number" hex.csv
csv ',started_at' 'imp,a,wall_s,1,2026-10-21T09:30:00Zjunk' >when.csv
refused "started_at with garbage" "when.csv:2: started_at '2026-10-21T09:30:00Zjunk' is not a UTC time" when.csv
csv ',run' 'imp,a,wall_s,1,99999999999999999999999' >run.csv
refused "run past 64 bits" "run.csv:2: run 99999999999999999999999 is out of range" run.csv
csv ',exit_code' 'imp,a,wall_s,1,99999999999' >code.csv
refused "exit code past an int" "code.csv:2: exit_code '99999999999' is not an integer" code.csv
# One value per run and metric: a second one is refused, whichever rows
# lie between them.
csv ',run' 'imp,a,wall_s,1,1' 'imp,b,wall_s,2,1' 'imp,a,wall_s,1.1,1' >dup.csv
refused "a second value of one run" "dup.csv: run 1 \(workload imp, arm a\) has a second value of wall_s \(rows 1 and 3" dup.csv
# A metric that is neither a time nor memory may be negative.
csv '' 'imp,a,score,-1.5' 'imp,b,score,-2' >score.csv
expect 0 "negative score: imported" "$PREREG" import s.lua score.csv --data "$D"

scenario "blanks around a value: the same on both sides"
fresh 3
csv '' 'imp,a,wall_s, 1' 'imp,a,wall_s,1 ' 'imp,a,wall_s, 1 ' >blank.csv
expect 0 "blanks: ' 1', '1 ' and ' 1 ' all imported" "$PREREG" import s.lua blank.csv --data "$D"
check "blanks: stored as 1" python3 - "$E/batches/b0001.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert [float(r["value"]) for r in rows] == [1.0, 1.0, 1.0], rows
PY

scenario "hyperfine JSON: duplicate keys, underflow, a byte order mark"
fresh 4
printf '{"results":[{"command":"a","times":[1,2,3]}],"results":[{"command":"b","times":[9]}]}' >dup.json
expect 2 "duplicate key: refused" "$PREREG" import s.lua dup.json --data "$D" --only imp
check_grep "duplicate key: says so" "dup.json:1: not valid JSON: duplicate object key" "$out"
printf '{"results":[{"command":"a",\n"times":[1,2,1e-400]}]}' >tiny.json
expect 2 "JSON underflow: refused" "$PREREG" import s.lua tiny.json --data "$D" --only imp
check_grep "JSON underflow: line and number" "tiny.json:2: the number 1e-400 is too small" "$out"
printf '\xef\xbb\xbf{"results":[{"command":"a","times":[1,2,3]},{"command":"b","times":[2,3,4]}]}' >bom.json
expect 0 "BOM: read as JSON" "$PREREG" import s.lua bom.json --data "$D" --only imp
check_grep "BOM: every time imported" "imported 6 rows" "$out"

scenario "a metrics file the run reads with the same rules"
fresh 5
expect 0 "metrics: the run completes" "$PREREG" run s.lua --data "$D" --only neg
expect 0 "metrics: the hex run completes" "$PREREG" run s.lua --data "$D" --only hex --resume
check "metrics: a negative time and a hex float make the run invalid" python3 - "$E" <<'PY'
import csv, glob, sys
rows = [r for f in sorted(glob.glob(sys.argv[1] + "/batches/b*.csv"))
        for r in csv.DictReader(open(f, newline=""))]
neg = [r for r in rows if r["workload"] == "neg"]
hexr = [r for r in rows if r["workload"] == "hex"]
assert neg and hexr, rows
assert all(r["valid"] == "0" and "cannot be negative" in r["reason"] for r in neg), neg
assert all(r["valid"] == "0" and "hexadecimal" in r["reason"] for r in hexr), hexr
PY

scenario "a command's metrics file with bytes that are not UTF-8"
fresh 9
expect 0 "bytes: the run completes" "$PREREG" run s.lua --data "$D" --only bytes
check "bytes: the reason frozen is UTF-8" python3 -c "open('$E/batches/b0001.csv', encoding='utf-8').read()"
expect 0 "bytes: analyze --json" "$PREREG" analyze s.lua --data "$D" --json
expect 0 "bytes: report" "$PREREG" report s.lua --data "$D"
check "bytes: every part of report.xlsx is well-formed XML" python3 - "$E/report/report.xlsx" <<'PY'
import sys, zipfile
from xml.dom import minidom
z = zipfile.ZipFile(sys.argv[1])
for n in z.namelist():
    if n.endswith(".xml") or n.endswith(".rels"):
        minidom.parseString(z.read(n))
PY
# The bundle of these data: published, verified, its workbook well-formed.
expect 0 "bytes: publish" "$PREREG" publish s.lua --data "$D" --out "$T/vl9.tar.gz"
expect 0 "bytes: verify BUNDLE" "$PREREG" verify "$T/vl9.tar.gz"
check "bytes: every part of the bundle's report.xlsx is well-formed XML" python3 - "$T/vl9.tar.gz" <<'PY'
import io, sys, tarfile, zipfile
from xml.dom import minidom
t = tarfile.open(sys.argv[1])
z = zipfile.ZipFile(io.BytesIO(t.extractfile("vl/report/report.xlsx").read()))
parts = [n for n in z.namelist() if n.endswith(".xml") or n.endswith(".rels")]
assert parts, z.namelist()
for n in parts:
    minidom.parseString(z.read(n))
PY

scenario "a frozen batch edited to hold bytes that are not UTF-8, its digests signed anew"
fresh 10
"$PREREG" import s.lua note8.csv --data "$D" >/dev/null || bad "edited: import"
# Row 2 of the batch (line 3) gets a host with a byte 0xFF; the batch's
# facts and the MANIFEST are given the new digests, so only the bytes
# themselves are wrong.
python3 - "$E" <<'PY' || bad "edited: the edit"
import hashlib, os, re, sys
os.chdir(sys.argv[1])
for f in ("batches", "batches/b0001.csv", "batches/b0001.json", "MANIFEST"):
    os.chmod(f, 0o755 if os.path.isdir(f) else 0o644)
lines = open("batches/b0001.csv", "rb").read().split(b"\n")
f = lines[2].split(b",")
f[10] = b"h\xffst"
lines[2] = b",".join(f)
csv = b"\n".join(lines)
open("batches/b0001.csv", "wb").write(csv)
facts = re.sub(rb'"csv_sha256": "[0-9a-f]+"',
               b'"csv_sha256": "%s"' % hashlib.sha256(csv).hexdigest().encode(),
               open("batches/b0001.json", "rb").read())
open("batches/b0001.json", "wb").write(facts)
new = {"batches/b0001.csv": csv, "batches/b0001.json": facts}
man = []
for l in open("MANIFEST").read().splitlines():
    name = l.split("  ", 1)[1]
    man.append("%s  %s" % (hashlib.sha256(new[name]).hexdigest(), name) if name in new else l)
open("MANIFEST", "w").write("\n".join(man) + "\n")
for f in ("batches/b0001.csv", "batches/b0001.json", "MANIFEST", "batches"):
    os.chmod(f, 0o555 if os.path.isdir(f) else 0o444)
PY
where="vl/batches/b0001.csv:3: host: not valid UTF-8 at byte 2 \(0xFF\)"
expect 1 "edited: verify finds it" "$PREREG" verify s.lua --data "$D"
check_grep "edited: verify names the file, line and field" "$where" "$out"
expect 1 "edited: publish refuses" "$PREREG" publish s.lua --data "$D" --out "$T/vl10.tar.gz"
check_grep "edited: publish names the file, line and field" "$where" "$out"
check_grep "edited: publish says nothing was published" "nothing was published" "$out"
check "edited: no bundle written" test ! -e "$T/vl10.tar.gz"
expect 2 "edited: analyze refuses" "$PREREG" analyze s.lua --data "$D" --json
check_grep "edited: analyze names the file, line and field" "$where" "$out"
expect 1 "edited: report refuses" "$PREREG" report s.lua --data "$D"
check "edited: no report written" test ! -e "$E/report/report.xlsx"

scenario "one value per arm"
fresh 6
csv '' 'imp,a,wall_s,1' 'imp,b,wall_s,0.5' >one.csv
"$PREREG" import s.lua one.csv --data "$D" >/dev/null || bad "import"
expect 0 "one value: analyze" "$PREREG" analyze s.lua --data "$D"
check_grep "one value: insufficient data, not a verdict" "^ +reference, n=1 +0\.500×, no CI, insufficient data$" "$out"
check_grep "one value: why, under the matrix" "imp · wall_s +b: insufficient data: 1 value for b and 1 for a; a 95% interval needs at least 5 per arm" "$out"
check_grep "one value: provisional on incomplete data" "^ +\(provisional\)$" "$out"
check "one value: never -×" bash -c "! grep -q -- '-×' <<<\"\$1\"" _ "$out"
check_grep "one value: the claim is inconclusive" "H1 +inconclusive" "$out"
expect 0 "one value: analyze --json" "$PREREG" analyze s.lua --data "$D" --json
check "one value: JSON says insufficient data, no CI" python3 -c "
import json, sys
d = json.loads(sys.argv[1])
r = [x for x in d['results'] if x['metric'] == 'wall_s'][0]
assert r['verdict'] == 'insufficient data' and r['ci_low'] is None, r
assert r['rule_verdict'] == 'insufficient data' and r['provisional'], r
assert d['rule']['min_n'] == 3, d['rule']
assert d['hypotheses'][0]['verdict'] == 'inconclusive', d['hypotheses']
" "$out"
expect 0 "one value: report" "$PREREG" report s.lua --data "$D"
check "one value: the report says insufficient data" grep -q "0\.500×, no CI, \*\*insufficient data\*\* (provisional)" "$E/report/report.md"
check "one value: the report never writes n/a×" bash -c "! grep -q 'n/a×' '$E/report/report.md'"
sed 's/seed = 3,/seed = 3, min_n = 1,/' s.lua >one.lua
sed -i 's/id = "vl"/id = "v1"/' one.lua
"$PREREG" register one.lua --data "$D" >/dev/null && "$PREREG" import one.lua one.csv --data "$D" >/dev/null || bad "min_n = 1: set-up"
expect 0 "min_n = 1: analyze" "$PREREG" analyze one.lua --data "$D"
check_grep "min_n = 1: still no interval from one value" "^ +reference, n=1 +0\.500×, no CI, insufficient data$" "$out"
expect 0 "min_n = 1: analyze --json" "$PREREG" analyze one.lua --data "$D" --json
check "min_n = 1: the JSON rule says it" python3 -c "
import json, sys
assert json.loads(sys.argv[1])['rule']['min_n'] == 1
" "$out"
# An amendment after data that lowers the confidence, so that 3 values per
# arm give an interval: the current rule decides, and the registered
# sample and rule (95%: at least 5 per arm) say insufficient data, in the
# matrix, in analyze --json and in the report.
fresh 6b
csv '' 'imp,a,wall_s,1' 'imp,a,wall_s,1.1' 'imp,a,wall_s,1.2' \
  'imp,b,wall_s,0.5' 'imp,b,wall_s,0.55' 'imp,b,wall_s,0.6' >three.csv
"$PREREG" import s.lua three.csv --data "$D" >/dev/null || bad "three values: import"
{ sed 's/confidence = 0.95,/confidence = 0.8,/' s.lua | sed '$d'
  echo '  amendments = { { date = "2026-11-30", why = "Three values per arm is all there is." } },'
  echo '}'; } >lower.lua
expect 0 "confidence lowered after data: amend" "$PREREG" amend lower.lua --data "$D"
expect 0 "confidence lowered: analyze" "$PREREG" analyze lower.lua --data "$D"
check_grep "confidence lowered: the matrix marks the registered sample" "^ +\(provisional\) registered \(n=3\): insufficient data$" "$out"
check_grep "confidence lowered: at the registered rule" "imp · wall_s +b: insufficient data \(provisional\) \(n=3\), amended: faster" "$out"
expect 0 "confidence lowered: analyze --json" "$PREREG" analyze lower.lua --data "$D" --json
check "confidence lowered: JSON, current and registered" python3 -c "
import json, sys
d = json.loads(sys.argv[1])
r = [x for x in d['results'] if x['metric'] == 'wall_s'][0]
assert r['verdict'] == 'faster' and d['rule']['confidence'] == 0.8, r
g = r['registered']
assert g['verdict'] == 'insufficient data' and g['ci_low'] is None and g['provisional'], g
assert d['original']['rule']['confidence'] == 0.95, d['original']['rule']
ch = d['registered_sample']['verdicts_changed']
assert ch == [{'workload': 'imp', 'metric': 'wall_s', 'arm': 'b', 'verdict': 'faster', 'registered': 'insufficient data'}], ch
" "$out"
expect 0 "confidence lowered: report" "$PREREG" report lower.lua --data "$D"
check "confidence lowered: the report gives the registered sample's insufficient data" \
  grep -q "at the registered sample (n=3) insufficient data (provisional)" "$E/report/report.md"
sed 's/seed = 3,/seed = 3, min_n = 0,/' s.lua >zero.lua
expect 2 "min_n = 0: refused" "$PREREG" check zero.lua
check_grep "min_n = 0: says the range" "zero.lua:[0-9]+: rule.min_n: .*an integer from 1 to 1000000" "$out"

scenario "ratios that overflow"
fresh 7
csv '' 'imp,a,pss_mib,1e-300' 'imp,a,pss_mib,1e-300' 'imp,a,pss_mib,1e-300' \
  'imp,b,pss_mib,1e300' 'imp,b,pss_mib,1e300' 'imp,b,pss_mib,1e300' \
  'imp,a,wall_s,0' 'imp,a,wall_s,0' 'imp,a,wall_s,0' 'imp,b,wall_s,1' 'imp,b,wall_s,2' 'imp,b,wall_s,3' >inf.csv
"$PREREG" import s.lua inf.csv --data "$D" >/dev/null || bad "import"
expect 0 "overflow: analyze" "$PREREG" analyze s.lua --data "$D"
check "overflow: never inf×" bash -c "! grep -q 'inf' <<<\"\$1\"" _ "$out"
check "overflow: never -×" bash -c "! grep -q -- '-×' <<<\"\$1\"" _ "$out"
check_grep "overflow: no ratio, in words" "^ +reference, n=3 +no ratio, insufficient data$" "$out"
check_grep "overflow: said in words" "ratio not finite: the reference median 1e-300 is too small beside 1e\+300" "$out"
check_grep "reference median 0: said in words" "ratio not finite: reference median is 0" "$out"
expect 0 "overflow: report" "$PREREG" report s.lua --data "$D"
check "overflow: no inf in the report" bash -c "! grep -q 'inf×' '$E/report/report.md'"
check "overflow: the report says no ratio" grep -q "no ratio, \*\*insufficient data\*\*" "$E/report/report.md"

scenario "a second run while one is active names the holder"
fresh 8
"$PREREG" run s.lua --data "$D" --only slow >first.out 2>&1 &
first=$!
for ((i = 0; i < 1200; i++)); do grep -q "pid $first" "$E/.lock" 2>/dev/null && break; sleep 0.05; done
expect 1 "second run: refused" "$PREREG" run s.lua --data "$D" --only slow
check_grep "second run: names the holder's pid and command" "another prereg command is writing to this experiment \(pid $first since [0-9T:-]+Z: .*prereg run s.lua" "$out"
check "second run: does not say --resume" bash -c "! grep -q -- '--resume' <<<\"\$1\"" _ "$out"
kill -INT "$first" 2>/dev/null
wait "$first"

report_scenarios
done_testing 53
