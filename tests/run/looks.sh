#!/usr/bin/env bash
# looks.sh: a workload with preregistered looks stops at the first look
# where every comparison is decided, and not before: arms whose values
# differ stop at the first look (fewer rows, COMPLETE, the stop in the
# batch's facts, status, analyze and the report), equal arms go on to the
# last; prereg killed mid-plan goes on with --resume exactly where the
# looks stand; rows beyond a stopped look are BEYOND PLAN; looks that do
# not end at runs, decrease or fall below min_n are refused with the fix.
# The arms' commands write fabricated values of their own, so no verdict
# depends on the machine's speed.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"

T=$(mktemp -d /tmp/prereg-looks-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T"

# sheet FILE B C [KILL]: arm a writes v = 1.0{round}, arm b B{round}, arm
# c C{round}; with KILL, the run of round KILL ends prereg with kill -9
# (once: the marker file).
sheet() {
  local kill=""
  [ -n "${4:-}" ] && kill="; if [ {round} = $4 ] && [ ! -e $T/killed ]; then touch $T/killed; kill -9 \$(cat $T/pid); sleep 5; fi"
  cat >"$1" <<LUA
protocol {
  id = "${1%.lua}", title = "Looks",
  arms = {
    { name = "a", reference = true, run = "echo v=1.0{round} >> \$PREREG_METRICS$kill" },
    { name = "b", run = "echo v=$2{round} >> \$PREREG_METRICS" },
    { name = "c", run = "echo v=$3{round} >> \$PREREG_METRICS" },
  },
  workloads = {
    { name = "w", runs = 18, looks = { 6, 12, 18 }, source = "both",
      metrics = { "v" } },
  },
  rule = { seed = 3, resamples = 2000, family = "holm",
           verdicts = { { "slower", ci_excludes = 1, ratio_above = 1.1 },
                        { "faster", ci_excludes = 1, ratio_below = 0.9 } } },
}
LUA
}
rows() { echo $(($(cat "$1"/batches/*.csv | grep -vc '^batch,') )); }

# Arms of very different values: decided at the first look.
sheet far.lua 5.0 0.2
expect 0 "check lists each look's confidence" "$PREREG" check far.lua
check_grep "look 1 of 3 after 6 runs at 1 - 0.05 / 3" \
  "look 1 of 3 after 6 runs per arm, at 98.3333% confidence" "$out"
check_grep "the rule names the family" "^Family +holm" "$out"
"$PREREG" register far.lua >/dev/null || bad "register far"
expect 0 "run far" "$PREREG" run far.lua
check_grep "run says where it stopped" "w: stopped at look 1 of 3 \(n=6\)" "$out"
check "18 runs, not 54" [ "$(grep -c '' data/far/batches/b0001.csv)" -eq 19 ]
check_grep "the facts record the stop" \
  '"stops": \[\{"workload": "w", "look": 1, "looks": 3, "n": 6, "at": "' \
  "$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))))' data/far/batches/b0001.json)"
expect 0 "status far" "$PREREG" status far.lua
check_grep "status COMPLETE" "^status: COMPLETE$" "$out"
check_grep "status names the stop" "^  w: stopped at look 1 of 3 \(n=6\)$" "$out"
expect 0 "analyze --json" "$PREREG" analyze far.lua --json
python3 - "$out" <<'PY' || bad "analyze --json gives look, looks, confidence_used, family_size"
import json, sys
d = json.loads(sys.argv[1])
rs = d["results"]
assert len(rs) == 2, rs
for r in rs:
    assert r["look"] == 1 and r["looks"] == [6, 12, 18], r
    assert r["n"] == 6 and r["family_size"] == 2, r
# Holm within the look's share 0.05 / 3: the first at half of it, the
# second at all of it.
used = sorted(r["confidence_used"] for r in rs)
assert abs(used[0] - (1 - 0.05 / 3 / 2)) < 1e-12 or \
       abs(used[1] - (1 - 0.05 / 3 / 2)) < 1e-12, used
assert abs(used[0] - (1 - 0.05 / 3)) < 1e-12, used
assert {r["verdict"] for r in rs} == {"higher", "lower"}, rs
assert d["rule"]["family"] == "holm" and d["rule"]["spending"] == "bonferroni"
PY
ok
expect 0 "report far" "$PREREG" report far.lua --out rep
check_grep "the report names the stop" "stopped at look 1 of 3" "$(cat rep/report.md)"
check_grep "the report says the runs saved" \
  "saved 36 of the 54 runs planned" "$(cat rep/report.md)"
check_grep "the report states the correction beside the rule" \
  "Holm's step-down" "$(cat rep/report.md)"

# Rows beyond the stopped look: beyond the plan, not analysed.
{
  echo "workload,arm,metric,value"
  for r in 1 2; do echo "w,a,v,1.$r"; echo "w,b,v,5.$r"; echo "w,c,v,0.2$r"; done
} >more.csv
expect 0 "import rows past the stop" "$PREREG" import far.lua more.csv
expect 0 "status after the import" "$PREREG" status far.lua
check_grep "they are BEYOND PLAN" "^status: BEYOND PLAN$" "$out"
check_grep "two a cell beyond" "^  w +a +6 +6 +0 +0 +2$" "$out"

# Equal arms: nothing decided before the last look.
sheet near.lua 1.0 1.0
"$PREREG" register near.lua >/dev/null || bad "register near"
expect 0 "run near" "$PREREG" run near.lua
check "all 54 runs" [ "$(grep -c '' data/near/batches/b0001.csv)" -eq 55 ]
check "no stop in the facts" [ -z "$(grep -l '"stops"' data/near/batches/b0001.json)" ]
expect 0 "status near" "$PREREG" status near.lua
check_grep "status COMPLETE, no stop" "^status: COMPLETE$" "$out"
expect 0 "analyze near --json" "$PREREG" analyze near.lua --json
check_grep "at the last look" '"look": 3' "$out"

# kill -9 mid-plan, then --resume: the looks go on where they stand.
# Equal arms killed in round 8, between looks 1 and 2: the plan is run
# to its end.
sheet kmid.lua 1.0 1.0 8
"$PREREG" register kmid.lua >/dev/null || bad "register kmid"
"$PREREG" run kmid.lua >/dev/null 2>&1 & echo $! >pid; wait $!
check "killed between looks" [ -e killed ]
expect 0 "status after the kill" "$PREREG" status kmid.lua
check_grep "INCOMPLETE and INTERRUPTED" "^status: INCOMPLETE \(2[1-3]/54\)" "$out"
expect 0 "--resume" "$PREREG" run kmid.lua --resume
expect 0 "status after --resume" "$PREREG" status kmid.lua
check_grep "COMPLETE, to the last look" "^status: COMPLETE$" "$out"
expect 0 "analyze kmid --json" "$PREREG" analyze kmid.lua --json
python3 -c 'import json,sys; assert all(r["n"] == 18 and r["n_reference"] == 18 for r in json.loads(sys.argv[1])["results"])' "$out" \
  && ok || bad "every arm has its 18 runs once"
# Different arms killed in round 3, before the first look: --resume
# finishes round 6, looks, and stops there.
rm -f killed
sheet kfar.lua 5.0 0.2 3
"$PREREG" register kfar.lua >/dev/null || bad "register kfar"
"$PREREG" run kfar.lua >/dev/null 2>&1 & echo $! >pid; wait $!
check "killed before the first look" [ -e killed ]
expect 0 "--resume kfar" "$PREREG" run kfar.lua --resume
check_grep "the resumed batch stops at look 1" "w: stopped at look 1 of 3" "$out"
expect 0 "status kfar" "$PREREG" status kfar.lua
check_grep "kfar COMPLETE" "^status: COMPLETE$" "$out"
check_grep "kfar stopped at look 1" "^  w: stopped at look 1 of 3 \(n=6\)$" "$out"
check "no run past round 6" [ -z "$(cut -d, -f1-20 data/kfar/batches/*.csv | grep -E ',w,[abc],(7|8|9|1[0-8]),')" ]

# Looks refused, with the fix.
refused() { # refused NAME LOOKS WANT
  sed "s/looks = { 6, 12, 18 }/looks = $2/" far.lua >"bad-$1.lua"
  expect 2 "$1: refused" "$PREREG" check "bad-$1.lua"
  check_grep "$1: the message names the fix" "$3" "$out"
}
refused short '{ 6, 12, 16 }' "workloads\[1\].looks: the last look is 16 but runs is 18: .*end the list with 18"
refused down '{ 12, 6, 18 }' "workloads\[1\].looks\[2\]: 6 does not come after the look before it \(12\): looks must increase"
refused few '{ 2, 12, 18 }' "workloads\[1\].looks\[1\]: 2 runs per arm is below the rule's min_n \(3\).*make every look at least 3"
done_testing 46
