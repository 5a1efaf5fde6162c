#!/usr/bin/env bash
# setup.sh: a setup mistake never spends the plan, through the real
# binary. A script that is not found: every warm-up of its arm fails, and
# run stops before the plan (exit 1, naming the arm, the command, the
# exit code and the end of its stderr); without warm-ups, its first run
# fails and is kept, marked, outside the plan. The same sheet, once what
# it needs is there, runs its whole plan with no amendment. A plan whose
# runs all failed after a warm-up that worked does not read COMPLETE.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
T=$(mktemp -d /tmp/prereg-setup.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
D=$T/data

sheet() { # sheet ID WARMUP CMD
  cat >"$1.lua" <<LUA
protocol {
  id = "$1", title = "Setup", question = "Is the plan kept?", author = "t",
  arms = { { name = "a", reference = true }, { name = "b", run = "env {cmd}" } },
  workloads = { { name = "w", runs = 3, warmup = $2, cmd = "$3",
                  metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 7,
           verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
}

# --- warm-ups all fail: stop before the plan ------------------------------
sheet warm 2 "sh $T/work.sh {arm}"
"$PREREG" register warm.lua --data "$D" >/dev/null || bad "register warm"
expect 1 "a script not found: run stops, exit 1" "$PREREG" run warm.lua --data "$D"
check_grep "it names the arm and why" "setup failure: w / a: its 2 warm-ups all failed: exit code 2" "$out"
check_grep "it names the command" "command: sh $T/work.sh a;" "$out"
check_grep "it gives the end of stderr" "the end of its stderr: .*$T/work.sh" "$out"
check_grep "it says the plan is intact" "the plan is intact, no amendment needed" "$out"
check_grep "it says where commands run" "batches/b0001/RUN.work" "$out"
check "b's warm-ups were not run" bash -c '! grep -q "w b warm-up 2" <<<"$1"' _ "$out"
check "no row was recorded" [ "$(tail -n +2 "$D/warm/batches/b0001.csv" | wc -l)" -eq 0 ]
expect 0 "status" "$PREREG" status warm.lua --data "$D"
check_grep "nothing of the plan was spent" "^status: INCOMPLETE \(0/6\)$" "$out"
echo 'exit 0' >"$T/work.sh"
expect 0 "fixed, the same sheet runs" "$PREREG" run warm.lua --data "$D"
check_grep "its whole plan" "batch b0002: 6 runs, 6 valid, 0 invalid" "$out"
expect 0 "status" "$PREREG" status warm.lua --data "$D"
check_grep "complete" "^status: COMPLETE$" "$out"
check "no amendment" [ ! -e "$D/warm/versions/v1.json" ]
rm "$T/work.sh"

# --- no warm-ups: the first run fails, kept outside the plan --------------
sheet first 0 "sh $T/work.sh {arm}"
"$PREREG" register first.lua --data "$D" >/dev/null || bad "register first"
expect 1 "the first run fails: run stops, exit 1" "$PREREG" run first.lua --data "$D"
check_grep "it names the arm and why" \
  "setup failure: w / a: its first run failed before any of its planned runs was collected: exit code 2" "$out"
check_grep "the row is kept, marked" "^0,[0-9a-f]+,b0001,run,w,a,1,1,b0001-0001," "$(cat "$D/first/batches/b0001.csv")"
check "its reason says setup failure" grep -Eq ',"?setup failure: exit code 2' "$D/first/batches/b0001.csv"
check "one row only" [ "$(tail -n +2 "$D/first/batches/b0001.csv" | wc -l)" -eq 1 ]
expect 0 "status" "$PREREG" status first.lua --data "$D"
check_grep "outside the plan" "^status: INCOMPLETE \(0/6\)$" "$out"
check_grep "counted as invalid, filling nothing" "^  w +a +3 +0 +1 +0 +0$" "$out"
expect 0 "dry run" "$PREREG" run first.lua --data "$D" --dry-run
check_grep "the whole plan is still to do" "6 runs" "$out"
echo 'exit 0' >"$T/work.sh"
expect 0 "fixed, the same sheet runs" "$PREREG" run first.lua --data "$D"
check_grep "its whole plan" "batch b0002: 6 runs, 6 valid, 0 invalid" "$out"
expect 0 "analyze" "$PREREG" analyze first.lua --data "$D"
check_grep "complete" "^status: COMPLETE$" "$out"
check_grep "the setup failure is listed as not counted" "w / a: 1 run: setup failure: exit code 2" "$out"
check "no amendment" [ ! -e "$D/first/versions/v1.json" ]
rm "$T/work.sh"

# --- only one arm's setup is wrong: the other's runs count ----------------
sheet onearm 0 "sh -c 'test {arm} = a || exit 5'"
"$PREREG" register onearm.lua --data "$D" >/dev/null || bad "register onearm"
expect 1 "arm b fails from the start" "$PREREG" run onearm.lua --data "$D"
check_grep "it names arm b" "setup failure: w / b: its first run failed" "$out"
check_grep "and its exit code" "exit code 5, expected 0" "$out"

# --- a plan whose runs all failed, after warm-ups that worked -------------
# Each arm's first command (its warm-up) succeeds and leaves a mark; every
# run after fails: not a setup mistake, so the plan runs on, and its
# status says the cells have too few valid runs.
sheet spent 1 "sh -c 'if [ -e $T/mark.{arm} ]; then exit 3; fi; touch $T/mark.{arm}'"
"$PREREG" register spent.lua --data "$D" >/dev/null || bad "register spent"
expect 0 "the plan runs on" "$PREREG" run spent.lua --data "$D"
check_grep "all six runs made" "batch b0001: 6 runs, 0 valid, 6 invalid" "$out"
expect 0 "status" "$PREREG" status spent.lua --data "$D"
check_grep "not COMPLETE: too few valid, each cell named" \
  "^status: TOO FEW VALID \(w/a 0 of 3, w/b 0 of 3\)$" "$out"
"$PREREG" analyze spent.lua --data "$D" --json >spent.json 2>/dev/null
check "--json flags" python3 - spent.json <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))["status"]
assert st["flags"] == ["TOO FEW VALID"], st
assert st["complete"] is False, st
assert st["line"] == "TOO FEW VALID (w/a 0 of 3, w/b 0 of 3)", st
PY

done_testing 36
