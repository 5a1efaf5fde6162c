#!/bin/bash
# parity.sh: the replay's parity check, for real. A small replay through
# the sandbox-cost image and launchers, run by prereg: one step fails in
# every arm (parity holds, the runs count), another fails in bwrap only
# ({arm} in the step). The bwrap runs, and only they, must be invalid,
# with the step named; the analysis must not count them; the report must
# say so.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/lib.sh"
: "${PREREG:?PREREG must name the prereg binary}"
cd "$tmp" || exit 1
check "the image builds" build_image "$tmp/image"

cat > parity.lua <<LUA
protocol {
  id = "parity", title = "Replay parity", author = "tests/demo",
  question = "Does one step failing in one arm only invalidate that arm?",
  vars = { sc = "$tmp/image" },
  arms = {
    { name = "bare", reference = true, run = "{sc}/launch-bare {cmd}" },
    { name = "bwrap", run = "{sc}/launch-bwrap {cmd}" },
    { name = "runc", run = "{sc}/launch-runc {cmd}" },
  },
  image = { tree = "{sc}" },
  workloads = {
    { name = "replay", runs = 2, expect_exit = "reference",
      metrics = { "wall_s" },
      steps = { "git init -q .", "sh -c 'echo hello > a.txt'",
                "cat missing.txt", "sh -c 'test {arm} != bwrap'",
                "cat a.txt" } },
    -- Fails in every arm: its folders are kept, with a git repository.
    { name = "broken", runs = 1, metrics = { "wall_s" },
      steps = { "git init -q .", "false" } },
  },
  rule = { estimator = "median", confidence = 0.95, resamples = 1000,
           seed = 17, verdicts = { { "slower", ci_excludes = 1 } } },
  hypotheses = {}, threats = {}, amendments = {},
}
LUA
"$PREREG" register parity.lua --data "$tmp/data" > reg.out 2>&1
rc=$?
check "register ($(cat reg.out))" test $rc -eq 0
"$PREREG" run parity.lua --data "$tmp/data" > run.out 2>&1
echo "run exit $?: $(tail -n 3 run.out)"

csv=$(ls "$tmp"/data/parity/batches/*.csv 2>/dev/null | head -n 1)
check "a batch was written" test -n "$csv"
# arm valid exit_code reason, one line per row
python3 - "$csv" > rows.txt <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    if r["workload"] == "replay":
        print(r["arm"], r["valid"], r["exit_code"], r["reason"], sep="\t")
PY
count() { awk -F'\t' -v a="$1" -v v="$2" '$1 == a && $2 == v' rows.txt | wc -l; }
check "bare: both runs valid ($(count bare 1))" test "$(count bare 1)" -eq 2
check "runc: both runs valid, the shared failure is parity ($(count runc 1))" \
  test "$(count runc 1)" -eq 2
check "bwrap: both runs invalid ($(count bwrap 0))" test "$(count bwrap 0)" -eq 2
check "bwrap: no valid run" test "$(count bwrap 1)" -eq 0
check "bare's step exit codes are 0;0;1;0;0" \
  grep -Pq '^bare\t1\t0;0;1;0;0\t' rows.txt
check "bwrap's step exit codes are 0;0;1;1;0" \
  grep -Pq '^bwrap\t0\t0;0;1;1;0\t' rows.txt
check "the reason names step 4: $(awk -F'\t' '$1 == "bwrap" { print $4; exit }' rows.txt)" \
  sh -c "awk -F'\t' '\$1 == \"bwrap\" { print \$4 }' rows.txt | grep -q 'step 4'"

# The invalid runs' folders are kept as evidence, with no nested git
# repository (the replay's .git is kept as dot-git), so the data folder
# can itself be committed; and the batch still verifies.
check "kept folders hold the replay's repository as dot-git" \
  sh -c "ls -d '$tmp'/data/parity/batches/b0001/*.work/dot-git | grep -q ."
check "no nested .git in the data folder" \
  sh -c "! find '$tmp/data' -name .git | grep -q ."
check "the data verify" "$PREREG" verify parity.lua --data "$tmp/data"

"$PREREG" analyze parity.lua --json --data "$tmp/data" > analyze.json 2> analyze.err
check "analyze runs ($(head -c 200 analyze.err))" test -s analyze.json
python3 - analyze.json > arms.txt <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    print(r["arm"], r["n"], r["n_reference"])
PY
check "the analysis compares runc on 2 runs each" grep -qx 'runc 2 2' arms.txt
check "the analysis has no bwrap result" sh -c "! grep -q '^bwrap' arms.txt"

"$PREREG" report parity.lua --data "$tmp/data" --out report > report.out 2>&1
check "report runs ($(head -c 200 report.out))" test -f report/report.md
check "the report says bwrap's runs were invalid, naming the step" \
  sh -c "grep -i 'bwrap' report/report.md | grep -i 'invalid\|not counted' | grep -q 'step 4' ||
         grep -qi 'step 4' report/report.md"
done_testing 18
