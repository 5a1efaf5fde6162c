#!/usr/bin/env bash
# export.sh: `prereg export` gives the rows as the analysis counts them: by
# default only those counted, with --all every row with its status and
# reason (invalid, beyond the plan, superseded); CSV and JSON say the
# same; a median computed from the export equals analyze --json's to the
# last bit; the README's pandas lines, run as written when pandas is
# there, give the same.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}" "${SRC:?}"

T=$(mktemp -d /tmp/prereg-export-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T"

sheet() { # sheet AMENDMENT
  cat > exp.lua <<LUA
protocol {
  id = "exp", title = "Export", question = "Is zstd faster than gzip?",
  author = "t",
  arms = {
    { name = "gzip", reference = true, run = "gzip -6 {cmd}" },
    { name = "zstd", run = "zstd -3 {cmd}" },
  },
  workloads = {
    { name = "text", runs = 4, metrics = { "wall_s", "out_kib" } },
    { name = "old", runs = 2, metrics = { "wall_s" } },
  },
  rule = { estimator = "median", confidence = 0.95, resamples = 500,
           seed = 3, verdicts = { { "faster", ratio_below = 1, ci_excludes = 1 } } },
  amendments = { $1 },
}
LUA
}
sheet ""
"$PREREG" register exp.lua --data d >/dev/null || bad "register"
# Fabricated values: four runs per arm counted, a fifth beyond the plan,
# one invalid run; "old" is superseded below.
{
  echo "workload,arm,metric,value,run,valid,note"
  for r in 1 2 3 4 5; do
    echo "text,gzip,wall_s,0.$((40 + r))1,$r,1,"
    echo "text,gzip,out_kib,$((7000 + r)),$r,1,"
    echo "text,zstd,wall_s,0.0$((60 + r))3,$r,1,"
    echo "text,zstd,out_kib,$((6000 + r)),$r,1,"
  done
  echo "text,zstd,wall_s,9.5,6,0,crashed"
  echo "text,zstd,out_kib,1,6,0,crashed"
  echo "old,gzip,wall_s,1.5,1,1,"
  echo "old,zstd,wall_s,1.25,1,1,"
} > values.csv
expect 0 "import the fabricated values" "$PREREG" import exp.lua values.csv --data d
# An amendment that supersedes the rows of "old".
sheet '{ date = "2026-11-01", why = "The old files were not the registered ones.", supersedes = { "old" } }'
expect 0 "amend" "$PREREG" amend exp.lua --data d

expect 0 "export" "$PREREG" export exp.lua --data d
csv=$out
check "the header" [ "$(head -1 <<<"$csv")" = \
  "workload,arm,metric,value,unit,run_id,batch,host,status,reason" ]
check "by default only counted rows (16)" [ "$(tail -n +2 <<<"$csv" | wc -l)" -eq 16 ]
check "each of them imported" \
  [ "$(tail -n +2 <<<"$csv" | grep -c ',imported,$')" -eq 16 ]
check_grep "units: s and KiB" '^text,gzip,out_kib,7001,KiB,' "$csv"
expect 0 "export --all" "$PREREG" export exp.lua --data d --all
all=$out
check "--all keeps every row (24)" [ "$(tail -n +2 <<<"$all" | wc -l)" -eq 24 ]
check_grep "an invalid row with its reason" '^text,zstd,wall_s,9.5,s,.*,invalid,.*crashed' "$all"
check_grep "a row beyond the plan" '^text,gzip,wall_s,0.451,s,5,b0001,,beyond the plan,"beyond the plan \(runs = 4\)' "$all"
check_grep "a superseded row with the amendment" '^old,gzip,wall_s,1.5,s,.*,superseded,.*amendment 1' "$all"
expect 0 "export --format json --all" "$PREREG" export exp.lua --data d --format json --all
printf '%s' "$out" > all.json
printf '%s\n' "$all" > all.csv
python3 - all.csv all.json <<'PY' && ok || bad "CSV and JSON hold the same rows"
import csv, json, sys
c = list(csv.DictReader(open(sys.argv[1])))
j = json.load(open(sys.argv[2]))
assert len(c) == len(j), (len(c), len(j))
for a, b in zip(c, j):
    for k in a:
        v = b[k]
        if k == "value":
            assert float(a[k]) == v, (a, b)
        else:
            assert a[k] == ("" if v is None else v), (k, a, b)
PY

# The median of analyze --json, from the export: exactly.
printf '%s\n' "$csv" > counted.csv
"$PREREG" analyze exp.lua --data d --json > analysis.json || bad "analyze --json"
python3 - counted.csv analysis.json <<'PY' && ok || bad "export reproduces analyze's medians"
import csv, json, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
res = json.load(open(sys.argv[2]))["results"]
assert res, "no results"
for r in res:
    for arm, key in ((r["arm"], "median"), (r["reference"], "median_reference")):
        v = [float(x["value"]) for x in rows if x["workload"] == r["workload"]
             and x["metric"] == r["metric"] and x["arm"] == arm]
        assert statistics.median(v) == r[key], (r, arm, statistics.median(v))
PY
# The README's pandas example, as written.
ex=$(awk '/^```python/ { p = 1; next } p && /^```/ { exit } p' "$SRC/README.md")
check "the README has the pandas example (three lines)" [ "$(wc -l <<<"$ex")" -eq 3 ]
if python3 -c 'import pandas' 2>/dev/null; then
  got=$(cd "$T" && sed 's/SHEET/exp.lua --data d/; s/startup/text/; s/runc/zstd/' <<<"$ex" | python3 -)
  want=$(python3 -c 'import json,sys; print([r["median"] for r in json.load(open("analysis.json"))["results"] if r["workload"]=="text" and r["metric"]=="wall_s"][0])')
  check "the README's pandas lines give analyze's median ($got)" [ "$got" = "$want" ]
else
  # Without pandas, the same three lines read as what they do: the
  # counted rows of one cell, their median.
  check_grep "the example reads prereg export" 'prereg export' "$ex"
  check "the example is Python" python3 -c \
    'import ast, sys; ast.parse(sys.stdin.read())' <<<"$ex"
fi

expect 2 "an unknown format" "$PREREG" export exp.lua --data d --format xml
check_grep "the formats are named" 'csv and json' "$out"
"$PREREG" register exp.lua --data e >/dev/null 2>&1
expect 0 "an experiment without rows exports a header" "$PREREG" export exp.lua --data e
check "just the header" [ "$(wc -l <<<"$out")" -eq 1 ]
done_testing 19
