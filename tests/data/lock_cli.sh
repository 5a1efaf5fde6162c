#!/usr/bin/env bash
# lock_cli.sh: the lock through the real binary: register, refuse an edited
# sheet, amend, import (CSV and real hyperfine JSON), status, verify
# catching changed, deleted and added files.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
T=$(mktemp -d /tmp/prereg-lock-cli.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
export PREREG_NOW=1792540800   # 2026-10-21T00:00:00Z

# in_files CMD...: CMD with its stdout kept in ./out and its stderr in
# ./err (has reads them), both shown when expect fails on its exit code.
hasnt() {
  if grep -qF -- "$3" "$1"; then bad "$2: '$3' in $1"; else ok; fi
}
snapshot() { find data -print 2>/dev/null | LC_ALL=C sort; }

write_sheet() { # write_sheet RUNS AMENDMENTS...
  local runs=$1
  shift
  {
    cat <<LUA
protocol {
  id = "locktest",
  title = "The lock holds",
  question = "Does prereg refuse data under an unrecorded sheet?",
  author = "T. Ester",
  arms = {
    { name = "bare", reference = true },
    { name = "other" },
  },
  workloads = {
    { name = "startup", runs = $runs, cmd = "true", source = "both",
      metrics = { "wall_s" } },
    { name = "measured", metrics = { "wall_s", "inner_s" } },
  },
  rule = { estimator = "median", confidence = 0.95, resamples = 1000,
           seed = 17, verdicts = { { "slower", ci_excludes = 1 } } },
  hypotheses = {
    { id = "H1", says = "other is slower", workload = "startup",
      metric = "wall_s", arms = { "other" }, claim = at_least(1) },
  },
  amendments = {
LUA
    for a in "$@"; do echo "    $a,"; done
    echo "  },"
    echo "}"
  } >sheet.lua
}

# register
write_sheet 3
expect 1 "import before register" in_files "$PREREG" import sheet.lua x.csv
has err "import before register" \
  "sheet.lua: not registered; run prereg register sheet.lua"
expect 0 "register" in_files "$PREREG" register sheet.lua
has out "register" "registered locktest"
has out "register" "$(sha256sum sheet.lua | cut -d' ' -f1)"
has out "register" "frozen  data/locktest/versions/v0.lua"
if cmp -s sheet.lua data/locktest/versions/v0.lua; then ok; else
  bad "v0.lua is not the sheet byte for byte"; fi
if [ "$(stat -c %a data/locktest/versions/v0.lua)" = 444 ]; then ok; else
  bad "v0.lua not read-only"; fi
has data/locktest/versions/v0.json "v0.json" '"filed_at": "2026-10-21T00:00:00Z"'
has data/locktest/versions/v0.json "v0.json" '"prereg_version"'
has data/locktest/MANIFEST "manifest" "  versions/v0.lua"
expect 0 "register again" in_files "$PREREG" register sheet.lua
has out "register again" "already registered as v0"
cp sheet.lua orig.lua
sed -i 's/The lock holds/Another title/' sheet.lua
expect 1 "register a different sheet" in_files "$PREREG" register sheet.lua
has err "register a different sheet" \
  "a different sheet is already registered under id 'locktest'"
cp orig.lua sheet.lua

# import (CSV) under the registered sheet
cat >good.csv <<'CSV'
workload,arm,metric,value,run,note
startup,bare,wall_s,0.0011,1,
startup,other,wall_s,0.0031,1,"a note, with a comma"
measured,bare,inner_s,1.5,1,
CSV
expect 0 "import csv" in_files "$PREREG" import sheet.lua good.csv
has out "import csv" "imported 3 rows from good.csv into data/locktest (sheet v0)"
has data/locktest/batches/b0001.csv "b0001 rows" \
  ",import,startup,other,1,2,1,,,,,,,1,,wall_s,0.0031,0"
has data/locktest/batches/b0001.json "b0001 facts" \
  "\"source_sha256\": \"$(sha256sum good.csv | cut -d' ' -f1)\""
has data/locktest/batches/b0001.json "b0001 facts" '"a note, with a comma"'

# edit -> refused -> amend -> accepted
write_sheet 5
expect 1 "import under an edited sheet" in_files "$PREREG" import sheet.lua good.csv
has err "lock message" "sheet.lua: differs from registered version v0:"
has err "lock message" "  --- versions/v0.lua"
has err "lock message" "  +++ sheet.lua"
has err "lock message" \
  '  -    { name = "startup", runs = 3, cmd = "true", source = "both",'
has err "lock message" \
  '  +    { name = "startup", runs = 5, cmd = "true", source = "both",'
has err "lock message" \
  'append an entry to `amendments` saying why, then run: prereg amend sheet.lua'
expect 2 "amend without an amendment" in_files "$PREREG" amend sheet.lua
has err "amend without an amendment" "no amendment was added"
has err "amend without an amendment: what to append" \
  'append to `amendments` an entry saying why, { date = "20'
A1='{ date = "2026-10-22", why = "Five runs: three were too few." }'
write_sheet 5 "$A1"
PREREG_NOW=1792627200 expect 0 "amend" in_files "$PREREG" amend sheet.lua
has out "amend" "amended locktest: v1 (2026-10-22: Five runs: three were too few.)"
has out "amend" "--- versions/v0.lua"
has out "amend" "+++ versions/v1.lua"
has out "amend" '+    { date = "2026-10-22", why = "Five runs: three were too few." },'
has data/locktest/versions/v1.json "v1.json" '"why": "Five runs: three were too few."'
has data/locktest/versions/v1.json "v1.json" '"runs_valid": 3'
has data/locktest/versions/v1.json "v1.json" '"filed_at": "2026-10-22T00:00:00Z"'
# The stored diff is what diff -u says (labels aside).
diff -u --label versions/v0.lua --label versions/v1.lua \
  data/locktest/versions/v0.lua data/locktest/versions/v1.lua >gnu.diff
if cmp -s gnu.diff data/locktest/versions/v1.diff; then ok; else
  bad "v1.diff differs from diff -u"; diff gnu.diff data/locktest/versions/v1.diff >&2; fi
# The same file again is refused (its rows would count twice); another
# file is taken.
before=$(snapshot)
expect 2 "import the same file again" in_files "$PREREG" import sheet.lua good.csv
has err "import the same file again" \
  "good.csv: already imported as batch b0001 (on 2026-10-21T00:00:00Z"
if [ "$(snapshot)" = "$before" ]; then ok; else bad "a refused import wrote"; fi
sed 's/0.0011/0.0012/' good.csv >good2.csv
expect 0 "import after amend" in_files "$PREREG" import sheet.lua good2.csv
has out "import after amend" "(sheet v1)"
expect 2 "amend again, unchanged" in_files "$PREREG" amend sheet.lua
has err "amend again, unchanged" "identical to version v1; nothing to amend"
has err "amend again, unchanged: what to append" \
  'append to `amendments` an entry { date = "'

# amendments are appended, never edited
write_sheet 6 '{ date = "2026-10-22", why = "Five runs: too few before." }' \
  '{ date = "2026-10-23", why = "Six." }'
expect 2 "edited amendment" in_files "$PREREG" amend sheet.lua
has err "edited amendment" \
  'amendments[1] (dated 2026-10-22) differs from the one recorded in v1'
write_sheet 6
expect 2 "removed amendment" in_files "$PREREG" amend sheet.lua
has err "removed amendment" "amendments[1] (dated 2026-10-22: \"Five runs: three were too few.\"), recorded in v1, was removed"
write_sheet 6 "$A1" '{ date = "2026-10-23", why = "Six." }' \
  '{ date = "2026-10-24", why = "Seven." }'
expect 2 "two new amendments" in_files "$PREREG" amend sheet.lua
has err "two new amendments" "2 new amendments; prereg amend records exactly one"
write_sheet 5 "$A1"

# malformed imports: nothing written
before=$(snapshot)
printf 'workload,arm,metric,value\nstartup,bare,wall_s,0.1\nstartup,bare,wall_s,abc\n' >bad1.csv
expect 2 "bad value" in_files "$PREREG" import sheet.lua bad1.csv
has err "bad value" "bad1.csv:3: value 'abc' is not a finite number"
printf 'workload,arm,metric,value,colour\nstartup,bare,wall_s,0.1,red\n' >bad2.csv
expect 2 "unknown column" in_files "$PREREG" import sheet.lua bad2.csv
has err "unknown column" "bad2.csv:1: unknown column 'colour'"
printf 'arm,value,workload,metric\nbare,0.1,startup,wall_s\nnope,0.2,startup,wall_s\n' >bad3.csv
expect 2 "undeclared arm" in_files "$PREREG" import sheet.lua bad3.csv
has err "undeclared arm" "bad3.csv:3: arm 'nope' is not declared in sheet.lua (declared: bare, other)"
printf 'workload,arm,metric,value\nstartup,bare,pss_mib,1\n' >bad4.csv
expect 2 "undeclared metric" in_files "$PREREG" import sheet.lua bad4.csv
has err "undeclared metric" "bad4.csv:2: metric 'pss_mib' is not declared by workload 'startup'"
printf 'workload,arm,metric,value\n"startup,bare,wall_s,1\n' >bad5.csv
expect 2 "open quote" in_files "$PREREG" import sheet.lua bad5.csv
has err "open quote" "bad5.csv:2: unterminated quoted field"
printf 'workload,arm,metric\nstartup,bare,wall_s\n' >bad6.csv
expect 2 "missing column" in_files "$PREREG" import sheet.lua bad6.csv
has err "missing column" "bad6.csv:1: missing column 'value'"
expect 2 "missing import file" in_files "$PREREG" import sheet.lua nosuch.csv
has err "missing import file" "nosuch.csv: cannot open"
expect 2 "--arm-from names an undeclared arm" in_files "$PREREG" import sheet.lua \
  good.csv --arm-from "true=ghost"
has err "--arm-from names an undeclared arm" \
  "--arm-from: arm 'ghost' is not declared in sheet.lua (declared: bare, other)"
if [ "$(snapshot)" = "$before" ]; then ok; else bad "a refused import wrote files"; fi
# Reordered columns, exit codes judged against the expectation, no final
# newline: accepted.
printf 'value,metric,arm,workload,exit_code\n0.2,wall_s,bare,startup,0\n0.3,wall_s,other,startup,1' >ok2.csv
expect 0 "reordered csv" in_files "$PREREG" import sheet.lua ok2.csv
has data/locktest/batches/b0003.csv "exit code judged" \
  "startup,other,0,2,line-3,,,,,,1,0,\"exit code 1, expected 0\",wall_s,0.3,0"

# hyperfine --export-json
hyperfine -N --runs 3 --warmup 0 --export-json hf.json \
  'true' 'sleep 0.01' >/dev/null 2>&1 || bad "hyperfine failed"
expect 2 "hyperfine, unmapped command" in_files "$PREREG" import sheet.lua hf.json
has err "hyperfine, unmapped command" \
  "hf.json: results[0].command: 'true' is not an arm; map it with --arm-from true=ARM"
expect 0 "hyperfine import" in_files "$PREREG" import sheet.lua hf.json \
  --arm-from "true=bare,sleep 0.01=other"
has out "hyperfine import" "imported 6 rows from hf.json"
# Every time of the JSON is a row, exactly, under workload "measured".
python3 - hf.json data/locktest/batches/b0004.csv >pycheck 2>&1 <<'PY'
import csv, json, sys
hf = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2], newline="")))
want = [(r["command"], t) for r in hf["results"] for t in r["times"]]
arms = {"true": "bare", "sleep 0.01": "other"}
got = [(row["arm"], float(row["value"])) for row in rows]
assert len(rows) == 6, rows
assert got == [(arms[c], t) for c, t in want], (got, want)
assert all(r["workload"] == "measured" and r["metric"] == "wall_s"
           and r["source"] == "import" and r["exit_code"] == "0"
           and r["sheet_version"] == "1" for r in rows)
print("hyperfine rows ok")
PY
has pycheck "hyperfine rows" "hyperfine rows ok"
python3 - hf.json >hfbad.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["results"][1]["times"][2] = "slow"
json.dump(d, sys.stdout)
PY
expect 2 "hyperfine, bad time" in_files "$PREREG" import sheet.lua hfbad.json \
  --arm-from "true=bare,sleep 0.01=other"
has err "hyperfine, bad time" "hfbad.json: results[1].times[2]: not a non-negative number"
expect 2 "hyperfine, bad --only" in_files "$PREREG" import sheet.lua hf.json \
  --only nope --arm-from "true=bare,sleep 0.01=other"
has err "hyperfine, bad --only" "--only: workload 'nope' is not declared"

# the flock: a second writer is refused
# The holder says when it holds the lock, and holds it until told, so
# that the check never depends on how fast it got there.
flock data/locktest/.lock sh -c ': >held; while [ -e held ]; do sleep 0.05; done' &
holder=$!
for _ in $(seq 600); do [ -e held ] && break; sleep 0.1; done
expect 1 "concurrent import" in_files "$PREREG" import sheet.lua good.csv
has err "concurrent import" "another prereg command is writing to this experiment"
rm -f held
wait "$holder"

# status
expect 0 "status" in_files "$PREREG" status sheet.lua
has out "status" "locktest: The lock holds"
has out "status" "v0   2026-10-21T00:00:00Z  sha256 $(sha256sum data/locktest/versions/v0.lua | cut -c1-12)  registered"
has out "status" "v1   2026-10-22T00:00:00Z  sha256 $(sha256sum data/locktest/versions/v1.lua | cut -c1-12)  2026-10-22: Five runs: three were too few."
has out "status" "sheet: sheet.lua matches v1"
grep -E '^  startup +other +5 +2 +1 +0 +0$' out >/dev/null && ok || { bad "status: startup/other row"; cat out >&2; }
grep -E '^  measured +bare +import +5 +0 +0 +0$' out >/dev/null && ok || { bad "status: measured/bare row"; cat out >&2; }
has out "status line" "status: INCOMPLETE (0/10) · IMPORTED · AMENDED AFTER DATA"

# verify
expect 0 "verify" in_files "$PREREG" verify sheet.lua
nfiles=$(wc -l <data/locktest/MANIFEST)
has out "verify" "ok: $nfiles files, chain of 2 versions"
cp -a data pristine
f=data/locktest/batches/b0001.csv
chmod u+w "$f"
printf '%s' "$(cat "$f" | sed '2s/0.0011/0.0012/')" >"$f"; echo >>"$f"
chmod 444 "$f"
expect 1 "verify, changed byte" in_files "$PREREG" verify sheet.lua
has out "verify, changed byte" "data/locktest/batches/b0001.csv: content differs from the MANIFEST"
has err "verify, changed byte" "verification failed: 1 problem"
rm -rf data && cp -a pristine data
chmod u+w data/locktest/versions
rm -f data/locktest/versions/v1.diff
expect 1 "verify, deleted file" in_files "$PREREG" verify sheet.lua
has out "verify, deleted file" "data/locktest/versions/v1.diff: missing (listed in MANIFEST line"
rm -rf data && cp -a pristine data
echo extra >data/locktest/batches/b0002.extra
expect 1 "verify, added file" in_files "$PREREG" verify sheet.lua
has out "verify, added file" "data/locktest/batches/b0002.extra: not in the MANIFEST"
rm -rf data && cp -a pristine data
chmod u+w data/locktest/versions/v0.lua
# A writable frozen file whose content matches (a copy or a checkout loses
# modes) is a note with the command that protects it again, not a failure.
expect 0 "verify, writable" in_files "$PREREG" verify sheet.lua
has out "verify, writable" "note: 1 frozen file is writable, first data/locktest/versions/v0.lua (mode 0644)"
has out "verify, writable" "chmod -R a-w data/locktest/versions data/locktest/batches"
rm -rf data && cp -a pristine data
# A frozen version rewritten along with its manifest line: the chain
# catches what the manifest cannot.
chmod u+w data/locktest/versions/v1.lua data/locktest/MANIFEST
echo "-- sneaked in" >>data/locktest/versions/v1.lua
sed -i "s|^[0-9a-f]*  versions/v1.lua|$(sha256sum data/locktest/versions/v1.lua | cut -d' ' -f1)  versions/v1.lua|" data/locktest/MANIFEST
chmod 444 data/locktest/versions/v1.lua data/locktest/MANIFEST
expect 1 "verify, rewritten chain" in_files "$PREREG" verify sheet.lua
has out "verify, rewritten chain" "data/locktest/versions/v1.lua: sha256"
has out "verify, rewritten chain" "differs from versions/v1.json"
has out "verify, rewritten chain" "data/locktest/versions/v1.diff: does not match the difference between versions/v0.lua and versions/v1.lua"
rm -rf data && cp -a pristine data
# A row claiming a sheet version newer than its batch, manifest "fixed".
f=data/locktest/batches/b0001.csv
chmod u+w "$f" data/locktest/MANIFEST
sed -i '3s/^0,/1,/' "$f"
sed -i "s|^[0-9a-f]*  batches/b0001.csv|$(sha256sum "$f" | cut -d' ' -f1)  batches/b0001.csv|" data/locktest/MANIFEST
chmod 444 "$f" data/locktest/MANIFEST
expect 1 "verify, row from the future" in_files "$PREREG" verify sheet.lua
has out "verify, row from the future" \
  "data/locktest/batches/b0001.csv:3: sheet_version 1 did not exist when the batch started (1 version then)"
rm -rf data && cp -a pristine data

# an amendment that supersedes a workload's earlier rows
write_sheet 5 "$A1" \
  '{ date = "2026-10-25", why = "Rerun startup in full.", supersedes = { "startup" } }'
PREREG_NOW=1792800000 expect 0 "amend, superseding" in_files "$PREREG" amend sheet.lua
has out "amend, superseding" "amended locktest: v2 (2026-10-25: Rerun startup in full.)"
expect 0 "status after superseding" in_files "$PREREG" status sheet.lua
has out "status after superseding" "supersedes earlier rows of: startup"
grep -E '^  startup +other +5 +0 +0 +3 +0$' out >/dev/null && ok || { bad "status: superseded startup/other"; cat out >&2; }
grep -E '^  measured +bare +import +5 +0 +0 +0$' out >/dev/null && ok || { bad "status: measured/bare kept"; cat out >&2; }
expect 0 "verify, three versions" in_files "$PREREG" verify sheet.lua
has out "verify, three versions" "chain of 3 versions"

done_testing 105
