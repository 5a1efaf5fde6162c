#!/usr/bin/env bash
# import_plan.sh: imports keep to the plan, through the real binary. The
# same source imported twice is refused naming the earlier batch; rows for
# a workload prereg runs itself are refused (CSV and hyperfine JSON) with
# what to write, until an amendment sets its source; then they are pooled
# under the plan's runs, the rest beyond the plan, and the status says so.
# Every refusal exits 2 and writes nothing. A CSV that gives one metric
# for every run and then the next one (a run's rows not adjacent) is
# analysed with every run's values of both metrics.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
T=$(mktemp -d /tmp/prereg-import-plan.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
export PREREG_NOW=1792540800 # 2026-10-21T00:00:00Z

snapshot() { find data -printf '%p %s %m\n' | LC_ALL=C sort; }

write_sheet() { # write_sheet SOURCE-KEY AMENDMENT...
  {
    cat <<LUA
protocol {
  id = "imp", title = "Imports keep to the plan", question = "q",
  author = "t",
  arms = { { name = "bare", reference = true }, { name = "env", run = "env {cmd}" } },
  workloads = {
    { name = "startup", runs = 3, cmd = "true", metrics = { "wall_s" }$1 },
    { name = "elsewhere", metrics = { "wall_s" } },
  },
  rule = { estimator = "median", confidence = 0.95, resamples = 500,
           seed = 3, verdicts = { { "slower", ci_excludes = 1 } } },
  amendments = {
LUA
    shift
    for a in "$@"; do echo "    $a,"; done
    printf '  },\n}\n'
  } >sheet.lua
}

write_sheet ""
expect 0 "register" in_files "$PREREG" register sheet.lua
expect 0 "run" in_files "$PREREG" run sheet.lua
cat >other.csv <<'CSV'
workload,arm,metric,value,run
startup,bare,wall_s,0.0011,1
startup,env,wall_s,0.0031,1
startup,bare,wall_s,0.0012,2
startup,env,wall_s,0.0032,2
CSV

# a workload prereg runs itself
before=$(snapshot)
expect 2 "CSV into a run workload" in_files "$PREREG" import sheet.lua other.csv
has err "run workload refused" \
  "other.csv:2: workload 'startup' is run by prereg itself (it has a cmd)"
has err "says what to write" 'write source = "both"'
has err "says what to write" 'or source = "import"'
has err "says to amend" "run prereg amend sheet.lua; nothing was imported"
check "a refused import wrote nothing" [ "$(snapshot)" = "$before" ]
hyperfine -N --runs 4 --warmup 0 --export-json hf.json 'true' 'env true' \
  >/dev/null 2>&1 || bad "hyperfine failed"
expect 2 "hyperfine into a run workload" in_files "$PREREG" import sheet.lua \
  hf.json --only startup --arm-from "true=bare,env true=env"
has err "hyperfine refused" "--only: workload 'startup' is run by prereg itself"
check "a refused hyperfine import wrote nothing" [ "$(snapshot)" = "$before" ]

# the same source twice
printf 'workload,arm,metric,value\nelsewhere,bare,wall_s,1.0\nelsewhere,env,wall_s,2.0\n' >e.csv
expect 0 "import into an import-only workload" in_files "$PREREG" import sheet.lua e.csv
before=$(snapshot)
expect 2 "the same file again" in_files "$PREREG" import sheet.lua e.csv
has err "names the earlier batch" "e.csv: already imported as batch b0002"
cp e.csv copy.csv
expect 2 "the same bytes under another name" in_files "$PREREG" import sheet.lua copy.csv
has err "same bytes refused" "copy.csv: already imported as batch b0002"
check "refused duplicates wrote nothing" [ "$(snapshot)" = "$before" ]
expect 0 "status" in_files "$PREREG" status sheet.lua
if grep -Eq '^  elsewhere +bare +import +1 +0 +0 +0$' out; then ok; else
  bad "status: elsewhere/bare counted once: $(cat out)"; fi

# allowed once the sheet says so, pooled under the plan
write_sheet ', source = "both"' \
  '{ date = "2026-10-22", why = "Add the hyperfine runs of another machine." }'
PREREG_NOW=1792627200 expect 0 "amend: source = both" in_files "$PREREG" amend sheet.lua
expect 0 "import with source = both" in_files "$PREREG" import sheet.lua \
  hf.json --only startup --arm-from "true=bare,env true=env"
expect 0 "status after the pooled import" in_files "$PREREG" status sheet.lua
# Three runs per arm counted (prereg's own, first in collection order),
# the four imported ones beyond the plan.
if grep -Eq '^  startup +env +3 +3 +0 +0 +4$' out; then ok; else
  bad "status: startup/env 3 counted, 4 beyond: $(cat out)"; fi
has out "status line" "status: BEYOND PLAN · IMPORTED · AMENDED AFTER DATA"
expect 0 "analyze --json" in_files "$PREREG" analyze sheet.lua --json
check "analysis: n = 3 of the plan, not 7" python3 - out <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
r = [x for x in j["results"] if x["workload"] == "startup"][0]
assert r["n"] == 3 and r["n_reference"] == 3, r
beyond = [e for e in j["exclusions"] if e["reason"].startswith("beyond the plan")]
assert [(e["arm"], e["runs"]) for e in beyond] == [("bare", 4), ("env", 4)], beyond
assert "BEYOND PLAN" in j["status"]["flags"], j["status"]
PY
# source = "import": prereg no longer runs it, imports are taken.
write_sheet ', source = "import"' \
  '{ date = "2026-10-22", why = "Add the hyperfine runs of another machine." }' \
  '{ date = "2026-10-23", why = "Only imported data from now on." }'
PREREG_NOW=1792713600 expect 0 "amend: source = import" in_files "$PREREG" amend sheet.lua
expect 0 "run skips an import workload" in_files "$PREREG" run sheet.lua --dry-run
has out "nothing planned for it" "no workload prereg runs itself"

# A CSV giving wall_s for runs 1-5, then cpu_s for the same runs: each
# run is both rows, and both metrics have their five values (taken
# apart, the cpu_s rows would be five more runs, beyond the plan).
mkdir apart && cd apart || exit 1
cat >s.lua <<'LUA'
protocol {
  id = "apart", title = "Rows of a run apart", author = "t",
  arms = { { name = "a", reference = true }, { name = "b", run = "env {cmd}" } },
  workloads = { { name = "w", runs = 5, source = "import",
                  metrics = { "wall_s", "cpu_s" } } },
  rule = { seed = 1, resamples = 200, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
python3 - <<'PY'
with open("apart.csv", "w") as f:
    f.write("workload,arm,metric,value,run\n")
    for metric, base in (("wall_s", 1.0), ("cpu_s", 0.5)):
        for run in range(1, 6):
            for arm, k in (("a", 1), ("b", 2)):
                f.write("w,%s,%s,%g,%d\n" % (arm, metric,
                                             base * k + 0.01 * run * run, run))
PY
expect 0 "apart: register" in_files "$PREREG" register s.lua
expect 0 "apart: import" in_files "$PREREG" import s.lua apart.csv
expect 0 "apart: analyze --json" in_files "$PREREG" analyze s.lua --json
check "apart: both metrics n = 5, medians from the file" python3 - out apart.csv <<'PY'
import csv, json, statistics, sys
j = json.load(open(sys.argv[1]))
want = {}
for r in csv.DictReader(open(sys.argv[2])):
    want.setdefault((r["metric"], r["arm"]), []).append(float(r["value"]))
assert len(want) == 4, want
for (metric, arm), v in want.items():
    c = [c for c in j["cells"] if (c["metric"], c["arm"]) == (metric, arm)]
    assert c and c[0]["valid"] == 5, (metric, arm, c)
    assert abs(c[0]["median"] - statistics.median(v)) < 1e-12, (c, v)
PY
expect 0 "apart: analyze" in_files "$PREREG" analyze s.lua
check "apart: no metric without data" [ "$(grep -c 'No data yet' out)" = 0 ]
expect 0 "apart: status" in_files "$PREREG" status s.lua
if grep -Eq '^  w +b +5 +5 +0 +0 +0$' out; then ok; else
  bad "status: w/b 5 runs counted, none beyond: $(cat out)"; fi
has out "apart: status line" "status: IMPORTED"
cd .. || exit 1

done_testing 35
