#!/usr/bin/env bash
# whole_arms.sh: arms that are whole commands (hyperfine's way: sh -c true
# against perl -e 1 against python3 -c pass), through the real binary:
# checked, planned, registered, run interleaved, rows with provenance,
# analysed and reported; {workload} in a whole command, reference parity,
# --only, and the sheets refused for mixing the two kinds of arm.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"

T=$(mktemp -d /tmp/prereg-whole-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T"
D=$T/data
PY=$(command -v python3)

cat > start.lua <<LUA
protocol {
  id = "start", title = "Interpreter start-up", author = "t",
  question = "How long do sh, perl and python3 take to start?",
  arms = {
    { name = "sh", reference = true, run = "sh -c true" },
    { name = "perl", run = "perl -e 1" },
    { name = "python3", run = "$PY -c pass" },
  },
  workloads = { { name = "start", runs = 5, warmup = 1,
                  metrics = { "wall_s", "maxrss_kib" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 1000,
           seed = 3, verdicts = { { "slower", ci_excludes = 1 } } },
  hypotheses = {
    { id = "H1", says = "perl starts in under 100x the time of sh",
      workload = "start", metric = "wall_s", arms = { "perl" },
      claim = below(100) },
  },
}
LUA

# --- check and the plan ---------------------------------------------------
expect 0 "check a sheet of whole-command arms" "$PREREG" check start.lua
check_grep "summary: each arm's own command" "runs each arm's own command" "$out"
check_grep "summary: 15 runs planned" "Planned +15 runs and 3 warm-ups" "$out"
expect 0 "dry run" "$PREREG" run start.lua --data "$D" --dry-run
check_grep "dry run: perl as written" "run: perl -e 1" "$out"
check_grep "dry run: python3 as written" "run: $PY -c pass" "$out"
check_grep "dry run: 15 runs to do" "^15 runs to do" "$out"
check "dry run writes nothing" [ ! -e "$D" ]

# --- register, run ------------------------------------------------------
expect 0 "register" "$PREREG" register start.lua --data "$D"
expect 0 "run" "$PREREG" run start.lua --data "$D"
check_grep "15 valid runs" "batch b0001: 15 runs, 15 valid, 0 invalid" "$out"
CSV=$D/start/batches/b0001.csv
python3 - "$CSV" <<'PY' && ok || bad "rows: interleaved rounds, provenance"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["metric"] == "wall_s"]
errs = []
def need(c, m):
    if not c: errs.append(m)
need(len(rows) == 15, "%d wall_s rows" % len(rows))
orders = set()
for rnd in range(1, 6):
    rr = sorted((r for r in rows if r["round"] == str(rnd)), key=lambda r: int(r["seq"]))
    need(sorted(r["arm"] for r in rr) == ["perl", "python3", "sh"], "round %d arms" % rnd)
    # Interleaved: a round's three runs follow one another.
    need([int(r["seq"]) for r in rr] == [3 * rnd - 2, 3 * rnd - 1, 3 * rnd], "round %d seq" % rnd)
    orders.add(tuple(r["arm"] for r in rr))
need(len(orders) > 1, "the same arm order in every round")
for r in rows:
    need(r["source"] == "run" and r["valid"] == "1" and r["exit_code"] == "0", "valid run")
    need(r["sheet_version"] == "0" and len(r["sheet_sha256"]) == 64, "sheet version")
    need(float(r["value"]) > 0, "a wall time")
if errs:
    print("\n".join(errs)); sys.exit(1)
PY
# The row names its arm; the frozen sheet version holds the arm's command.
check "frozen sheet holds perl's command" grep -q 'run = "perl -e 1"' "$D/start/versions/v0.lua"
check "maxrss is perl's, not prereg's" python3 - "$CSV" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["metric"] == "maxrss_kib"]
perl = [float(r["value"]) for r in rows if r["arm"] == "perl"]
py = [float(r["value"]) for r in rows if r["arm"] == "python3"]
sys.exit(0 if len(perl) == 5 and min(py) > max(perl) else 1)
PY

# --- analyse and report ---------------------------------------------------
expect 0 "analyze --json" "$PREREG" analyze start.lua --data "$D" --json
python3 -c '
import json, sys
j = json.loads(sys.argv[1])
arms = sorted(r["arm"] for r in j["results"] if r["metric"] == "wall_s")
ok = arms == ["perl", "python3"] and all(r["reference"] == "sh" and r["n"] == 5
    for r in j["results"])
ok = ok and [h["id"] for h in j["hypotheses"]] == ["H1"]
sys.exit(0 if ok else 1)' "$out" && ok || bad "analyze: perl and python3 against sh: $out"
expect 0 "report" "$PREREG" report start.lua --data "$D"
MD=$D/start/report/report.md
check "report written" test -s "$MD" -a -s "$D/start/report/report.html"
check_grep "report: perl's command in the arms table" '\| perl \| compared \| perl -e 1 \|' "$(cat "$MD")"
check_grep "report: the workload runs the arms' commands" "\| start \| 5 \| 1 \| each arm's command \|" "$(cat "$MD")"
expect 0 "verify" "$PREREG" verify start.lua --data "$D"

# --- {workload} and {round} in whole commands; reference parity ---------
cat > par.lua <<'LUA'
protocol {
  id = "par", title = "Parity of whole commands", author = "t",
  arms = {
    { name = "a", reference = true, run = "sh -c 'echo {workload}-{round}; exit 1'" },
    { name = "b", run = "sh -c 'echo {workload}-{round}; test {round} -eq 2 || exit 1'" },
  },
  workloads = {
    { name = "same", runs = 3, expect_exit = "reference" },
    { name = "other", runs = 1, expect_exit = "any" },
  },
  rule = { seed = 1, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
expect 0 "register par" "$PREREG" register par.lua --data "$D"
expect 0 "run --only same" "$PREREG" run par.lua --data "$D" --only same
check_grep "round 2 of b breaks parity" "batch b0001: 6 runs, 5 valid, 1 invalid" "$out"
python3 - "$D/par/batches/b0001.csv" <<'PY' && ok || bad "parity rows"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = [(r["arm"], r["round"]) for r in rows if r["valid"] == "0"]
b2 = [r for r in rows if r["arm"] == "b" and r["round"] == "2"][0]
sys.exit(0 if bad == [("b", "2")] and b2["exit_code"] == "0" and
         "reference" in b2["reason"] else 1)
PY
out=$(cat "$D"/par/batches/b0001/*.stdout 2>/dev/null)
check_grep "{workload}-{round} expanded in the run" "^same-3$" "$out"
expect 0 "run the other workload" "$PREREG" run par.lua --data "$D" --resume
check_grep "other: 2 runs" "batch b0002: 2 runs, 2 valid" "$out"

# --- refusals -------------------------------------------------------------
sed 's/run = "perl -e 1"/run = "perl -e 1 {cmd}"/' start.lua > mixed.lua
expect 2 "mixed arms refused" "$PREREG" check mixed.lua
check_grep "mixed: FILE:LINE and both kinds named" \
  'mixed.lua:[0-9]+: arms\[2\]\.run: contains \{cmd\}, but arms\[1\] "sh" is a whole command' "$out"
sed 's/warmup = 1,/warmup = 1, cmd = "x",/' start.lua > dummy.lua
expect 2 "a dummy cmd beside whole commands refused" "$PREREG" check dummy.lua
check_grep "dummy cmd: says nothing would run it" \
  'workloads\[1\]\.cmd: no arm would run it: every arm.s run is a whole command' "$out"
done_testing 30
