#!/usr/bin/env bash
# plan_family.sh: `prereg plan` on a family: a sheet of 10 arms that all
# run the same command (fabricated pilot values from one distribution,
# imported; no timing). With family = "holm" the family-wise rate of a
# false verdict with a direction is at most 1 - confidence, fixed and
# under looks; with family = "none" it is well above; and analyze with
# holm still decides a real 5x difference among the nine, and plan's
# power under the correction says so.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}" "${SRC:?}"
PY=/usr/bin/python3
T=$(mktemp -d /tmp/prereg-plan-family.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
export PREREG_NOW=1792540800 # 2026-10-21T00:00:00Z

# sheet FAMILY ID: 10 arms, one workload, the reference a0.
sheet() {
  {
    printf 'protocol {\n  id = "%s", title = "t", question = "q", author = "a",\n' "$2"
    printf '  arms = { { name = "a0", reference = true }'
    for i in 1 2 3 4 5 6 7 8 9; do printf ', { name = "a%d" }' "$i"; done
    printf ' },\n  workloads = { { name = "w", runs = 20, metrics = { "wall_s" } } },\n'
    printf '  rule = { confidence = 0.95, resamples = 1000, seed = 5, family = "%s",\n' "$1"
    printf '    verdicts = { { "slower", ci_excludes = 1, ratio_above = 1 },\n'
    printf '                 { "faster", ci_excludes = 1, ratio_below = 1 } } },\n}\n'
  } >"$2.lua"
}
sheet holm fam-holm
sheet none fam-none
sheet holm five
# The pilot: 30 values of every arm from one log-normal; five.csv: 20 of
# each, a9's five times as large.
$PY - <<'PY'
import numpy as np
g = np.random.default_rng(2026)
with open("pilot.csv", "w") as f, open("five.csv", "w") as h:
    f.write("workload,arm,metric,value\n")
    h.write("workload,arm,metric,value\n")
    for i in range(10):
        for x in g.lognormal(0, 0.2, 30):
            f.write("w,a%d,wall_s,%.17g\n" % (i, x))
        for x in g.lognormal(0, 0.2, 20):
            h.write("w,a%d,wall_s,%.17g\n" % (i, x * (5 if i == 9 else 1)))
PY
for id in fam-holm fam-none; do
  expect 0 "register $id" "$PREREG" register "$id.lua"
  expect 0 "import the pilot of $id" "$PREREG" import "$id.lua" pilot.csv
done

# field JSON KEY INDEX: one number of plan's JSON.
field() {
  $PY -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]][int(sys.argv[3])])' "$@"
}
for id in fam-holm fam-none; do
  "$PREREG" plan "$id.lua" --pilot "data/$id" --sizes 10,20 --looks 5,10,20 \
    --sims 800 --json >"$id.json" 2>"$id.err"
  check "plan $id --json exits 0" test $? -eq 0 || cat "$id.err" >&2
done
check_grep "plan --json: the family of 9 comparisons" \
  '"families": \[\{"workload": "w", "size": 9, "p_false_family": \[' \
  "$(cat fam-holm.json)"
for col in 0 1 2; do
  v=$(field fam-holm.json p_false_family $col)
  check "holm: p_false_family[$col] = $v <= 0.05" \
    $PY -c "import sys; sys.exit(not $v <= 0.05)"
done
for col in 0 1; do
  v=$(field fam-none.json p_false_family $col)
  check "none: p_false_family[$col] = $v is well above 0.05 (>= 0.10)" \
    $PY -c "import sys; sys.exit(not $v >= 0.10)"
done
expect 0 "plan fam-holm, text" "$PREREG" plan fam-holm.lua \
  --pilot data/fam-holm --sizes 10,20 --sims 100
check_grep "plan: the family's line in the text" \
  'family of 9 \(holm\) +[0-9.]+% +[0-9.]+%' "$out"

# A real 5x difference among ten arms is still decided under holm.
expect 0 "register five" "$PREREG" register five.lua
expect 0 "import five" "$PREREG" import five.lua five.csv
expect 0 "analyze five --json" "$PREREG" analyze five.lua --json
printf '%s\n' "$out" >five.json
check "holm: a9 (5x) is slower, at a corrected confidence" $PY -c '
import json, sys
s = json.load(open("five.json"))
r = [x for x in s["results"] if x["arm"] == "a9"][0]
sys.exit(not (r["rule_verdict"] == "slower" and r["confidence_used"] > 0.95))'
# plan's power under the correction: every arm drawn from its own values
# in one experiment, each comparison at Holm's error: a9 (5x) decides,
# the nine equal arms almost never; without a correction, no such row.
expect 0 "plan five --json" "$PREREG" plan five.lua --pilot data/five \
  --sizes 5,10 --sims 300 --json
printf '%s\n' "$out" >fiveplan.json
check "plan holm: a9 decided in the family, the equal arms not" $PY -c '
import json, sys
j = json.load(open("fiveplan.json"))
c = {x["arm"]: x["p_decided_family"] for x in j["comparisons"]}
assert c["a9"][1] >= 0.9, c["a9"]
assert all(max(v) <= 0.1 for a, v in c.items() if a != "a9"), c'
check "plan none: no power under a correction" $PY -c '
import json, sys
j = json.load(open("fam-none.json"))
sys.exit(any(x["p_decided_family"] is not None for x in j["comparisons"]))'
expect 0 "plan five, text" "$PREREG" plan five.lua --pilot data/five \
  --sizes 5,10 --sims 100
check_grep "plan holm: the row in the text" "decided in family +[0-9.]+%" \
  "$out"
# A family of one comparison, from a pilot of 5 values with ties (1, 1,
# 1, 2, 2 in both arms): its false rate is the comparison's own p_false
# (the same smoothed truth, other seeds), near the level; drawn from the
# tied values as they are it would be far below it.
cat >tie.lua <<'LUA'
protocol {
  id = "tie", title = "t", question = "q", author = "a",
  arms = { { name = "a0", reference = true }, { name = "a1" } },
  workloads = { { name = "w", runs = 20, metrics = { "wall_s" } } },
  rule = { confidence = 0.95, resamples = 1000, seed = 5, family = "holm",
    verdicts = { { "slower", ci_excludes = 1, ratio_above = 1 },
                 { "faster", ci_excludes = 1, ratio_below = 1 } } },
}
LUA
printf 'workload,arm,metric,value\n' >tie.csv
for v in 1 1 1 2 2; do printf 'w,a0,wall_s,%s\nw,a1,wall_s,%s\n' "$v" "$v" >>tie.csv; done
expect 0 "register tie" "$PREREG" register tie.lua
expect 0 "import the tied pilot" "$PREREG" import tie.lua tie.csv
expect 0 "plan tie --json" "$PREREG" plan tie.lua --pilot data/tie \
  --sizes 10,20 --sims 2000 --json
printf '%s\n' "$out" >tie.json
check "ties: the family's false rate is the comparison's own" $PY -c '
import json
j = json.load(open("tie.json"))
fam, own = j["p_false_family"], j["comparisons"][0]["p_false"]
assert all(abs(a - b) <= 0.02 and a >= 0.02 for a, b in zip(fam, own)), (fam, own)'
done_testing 26
