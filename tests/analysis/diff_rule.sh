#!/usr/bin/env bash
# diff_rule.sh: the rule may decide on the difference. On fabricated
# values (imported): verdict conditions on the difference and its
# interval (diff_ci_excludes, diff_above, diff_below, diff_ci_within)
# decide each comparison as its difference's interval says, also where a
# reference median of 0 leaves no ratio; check writes them in words, the
# report too; an undecided comparison says which condition failed; plan
# and a family correction, which read ratios only, refuse such a rule
# with what to do instead of misreporting it.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"

T=$(mktemp -d /tmp/prereg-diffrule-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T"

cat > d.lua <<'LUA'
protocol {
  id = "dr", title = "Differences decide", question = "What does isolation add?",
  author = "t",
  arms = { { name = "bare", reference = true, run = "{cmd}" },
           { name = "bwrap", run = "bwrap {cmd}" },
           { name = "near", run = "near {cmd}" },
           { name = "less", run = "less {cmd}" } },
  workloads = { { name = "exec", source = "import", runs = 10, metrics = { "wall_s" } },
                { name = "zero", source = "import", runs = 10, metrics = { "sys_s" } } },
  rule = { seed = 3, resamples = 2000,
           verdicts = { { "slower", diff_ci_excludes = 0.005, diff_above = 0.005 },
                        { "faster", diff_ci_excludes = -0.005, diff_below = -0.005 },
                        { "tie", diff_ci_within = { -0.005, 0.005 } } } },
}
LUA
# exec: bwrap adds 20 ms, near nothing, less saves 20 ms; zero: the
# reference's median is 0 (no ratio), bwrap adds 22 ms, near 4.5 ms (its
# interval reaches past 5 ms: undecided), less nothing.
{
  echo "workload,arm,metric,value"
  for r in 0 1 2 3 4 5 6 7 8 9; do
    echo "exec,bare,wall_s,0.10$r"
    echo "exec,bwrap,wall_s,0.12$r"
    echo "exec,near,wall_s,0.10$((9 - r))"
    echo "exec,less,wall_s,0.08$r"
    echo "zero,bare,sys_s,0"
    echo "zero,bwrap,sys_s,0.02$r"
    echo "zero,near,sys_s,0.00$r"
    echo "zero,less,sys_s,0"
  done
} > values.csv

expect 0 "check" "$PREREG" check d.lua
check_grep "check: the conditions in words" \
  "slower +the difference's CI excludes 0\.005 and the difference is above 0\.005" "$out"
check_grep "check: the interval condition in words" \
  "tie +the difference's CI lies within \[-0\.005, 0\.005\]" "$out"
"$PREREG" register d.lua --data d >/dev/null || bad "register"
expect 0 "import" "$PREREG" import d.lua values.csv --data d
expect 0 "analyze --json" "$PREREG" analyze d.lua --data d --json
printf '%s' "$out" > d.json
python3 - d.json <<'PY' && ok || bad "each verdict is what the difference's interval says"
import json, sys
j = json.load(open(sys.argv[1]))
def rule(d, lo, hi):
    if (lo > 0.005 or hi < 0.005) and d > 0.005:
        return "slower"
    if (lo > -0.005 or hi < -0.005) and d < -0.005:
        return "faster"
    if -0.005 <= lo and hi <= 0.005:
        return "tie"
    return "inconclusive"
got = {}
for r in j["results"]:
    want = rule(r["difference"], r["difference_ci_low"], r["difference_ci_high"])
    assert r["verdict"] == r["rule_verdict"] == want, (r, want)
    got[(r["workload"], r["arm"])] = want
assert got == {("exec", "bwrap"): "slower", ("exec", "near"): "tie",
               ("exec", "less"): "faster", ("zero", "bwrap"): "slower",
               ("zero", "near"): "inconclusive", ("zero", "less"): "tie"}, got
z = [r for r in j["results"] if r["workload"] == "zero"]
assert all(r["ratio"] is None and r["ci_low"] is None for r in z), z
near = [r for r in j["results"] if (r["workload"], r["arm"]) == ("zero", "near")][0]
assert near["why"] == (
    "slower: the difference's CI [0.00200, 0.00700] contains 0.005; "
    "faster: the difference 0.00450 is not below -0.005; "
    "tie: the difference's CI [0.00200, 0.00700] is not within [-0.005, 0.005]"), near["why"]
PY
expect 0 "report" "$PREREG" report d.lua --data d --out rep
check_grep "report: the rule's conditions" \
  "^1\. \*\*slower\*\* when the difference's CI excludes 0\.005 and the difference is above 0\.005$" \
  "$(cat rep/report.md)"

# plan reads ratios only: it says so and what to do, rather than report
# that the rule never decides.
expect 2 "plan refuses a rule on the difference" "$PREREG" plan d.lua --pilot d/dr
check_grep "plan: what to do" "d\.lua: rule: plan simulates verdicts on the ratio only.*choose runs yourself" "$out"
sed 's/seed = 3,/seed = 3, family = "holm",/' d.lua > fam.lua
expect 2 "a family correction with a verdict on the difference" "$PREREG" check fam.lua
check_grep "family: named, with what to do" 'fam\.lua:[0-9]+: rule\.family: .*write family = "none"' "$out"
sed 's/diff_ci_within = { -0.005, 0.005 }/diff_ci_within = { 0.005, -0.005 }/' d.lua > bad.lua
expect 2 "an empty interval" "$PREREG" check bad.lua
check_grep "bad interval named" 'rule\.verdicts\[3\]\.diff_ci_within: the low end 0\.005 must be below the high end -0\.005' "$out"
sed 's/diff_above = 0.005 }/diff_above = 0.005, diff_below = 0.001 }/' d.lua > never.lua
expect 2 "conditions that never both hold" "$PREREG" check never.lua
check_grep "never both" 'diff_above = 0\.005 and diff_below = 0\.001 can never both hold' "$out"

done_testing 16
