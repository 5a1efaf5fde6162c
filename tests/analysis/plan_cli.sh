#!/usr/bin/env bash
# plan_cli.sh: `prereg pilot` and `prereg plan` through the real binary.
# plan's probabilities against an independent NumPy simulation on pilot
# values from known distributions (plan_check.py, imported values, no
# timing); a pilot that does not cover a cell refused naming it; a pilot
# run by the engine (its values never asserted) frozen in DATA/ID/pilot,
# listed in the MANIFEST, checked by verify, named by status, bundled, and
# absent from analyze, run's to-do and the counting; plan --write then
# register freezing the plan block, the report saying how the runs were
# chosen; a registered sheet refused by --write.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}" "${SRC:?}"
PY=/usr/bin/python3
T=$(mktemp -d /tmp/prereg-plan-cli.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
export PREREG_NOW=1792540800 # 2026-10-21T00:00:00Z

# plan against NumPy, each line of plan_check.py one check.
mkdir check
PREREG_THREADS=2 $PY "$SRC/tests/analysis/plan_check.py" "$PREREG" \
  "$T/check" >check.txt 2>&1
rc=$?
while IFS= read -r line; do
  case $line in
    "ok    "*) ok ;;
    "FAIL  "*) bad "${line#FAIL  }" ;;
  esac
done <check.txt
check "plan_check.py exits 0 (exit $rc)" test $rc -eq 0 ||
  tail -n 20 check.txt >&2
check "plan_check.py made its checks" \
  test "$(grep -c '^ok    ' check.txt)" -ge 150

# The same numbers for any thread count, and run after run.
cd check
expect 0 "plan, 1 thread" env PREREG_THREADS=1 "$PREREG" plan sheet.lua \
  --pilot data/plan-check --json --sizes 5,8 --sims 300
one=$out
expect 0 "plan, 2 threads" env PREREG_THREADS=2 "$PREREG" plan sheet.lua \
  --pilot data/plan-check --json --sizes 5,8 --sims 300
check "plan: the same JSON on 1 and 2 threads" [ "$one" = "$out" ]
check_grep "plan --json: recommended per workload" \
  '"recommended": \{"normal": (null|[0-9]+), "lognormal"' "$out"
cd "$T"

# A pilot that lacks a cell is refused, naming it (exit 2).
cat >gap.lua <<'LUA'
protocol {
  id = "gap", title = "gap", author = "t",
  arms = { { name = "ref", reference = true }, { name = "b" },
           { name = "c" } },
  workloads = { { name = "w", runs = 4, metrics = { "wall_s" } },
                { name = "v", runs = 4, metrics = { "wall_s" } } },
  rule = { seed = 3, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
{
  echo workload,arm,metric,value
  for x in 1.0 1.1 1.2 1.3; do
    echo "w,ref,wall_s,$x"
    echo "w,b,wall_s,$x"
    echo "w,c,wall_s,$x"
    echo "v,ref,wall_s,$x"
    echo "v,b,wall_s,$x"
  done
} >gap.csv
expect 0 "gap: register" "$PREREG" register gap.lua
expect 0 "gap: import" "$PREREG" import gap.lua gap.csv
expect 2 "gap: plan refused" "$PREREG" plan gap.lua --pilot data/gap
check_grep "gap: the cell named" \
  "no valid values of workload v, arm c, metric wall_s" "$out"
expect 2 "plan without --pilot" "$PREREG" plan gap.lua
check_grep "plan without --pilot: says what" "plan needs --pilot PATH" "$out"
expect 2 "plan --sizes not increasing" "$PREREG" plan gap.lua --pilot \
  data/gap --sizes 10,5
expect 2 "plan --power 1" "$PREREG" plan gap.lua --pilot data/gap --power 1

# The rule's pairs planned too: each later arm against the pair's earlier
# arm, drawn from both arms' values, keyed with its reference, and in the
# recommendation.
cat >pairs.lua <<'LUA'
protocol {
  id = "pairs", title = "pairs", author = "t",
  arms = { { name = "gzip", reference = true }, { name = "xz" },
           { name = "zstd" } },
  workloads = { { name = "text", runs = 4, metrics = { "wall_s" } } },
  rule = { seed = 3, pairs = "all", verdicts = {
    { "faster", ratio_below = 1, ci_excludes = 1 },
    { "slower", ratio_above = 1, ci_excludes = 1 } } },
}
LUA
{
  echo workload,arm,metric,value
  for x in 1 2 3 4; do
    echo "text,gzip,wall_s,1.$x"
    echo "text,xz,wall_s,3.$x"
    echo "text,zstd,wall_s,0.2$x"
  done
} >pairs.csv
expect 0 "pairs: register" "$PREREG" register pairs.lua
expect 0 "pairs: import" "$PREREG" import pairs.lua pairs.csv
expect 0 "pairs: plan --json" "$PREREG" plan pairs.lua --pilot data/pairs \
  --json --sizes 3,6 --sims 200
printf '%s' "$out" >pairs.json
$PY - pairs.json <<'PYC' && ok || bad "pairs: the pair planned with its reference"
import json, sys
j = json.load(open(sys.argv[1]))
keys = [(c["arm"], c["reference"]) for c in j["comparisons"]]
assert keys == [("xz", "gzip"), ("zstd", "gzip"), ("zstd", "xz")], keys
p = j["comparisons"][2]
assert abs(p["pilot_ratio"] - 0.225 / 3.25) < 1e-12, p["pilot_ratio"]
assert (p["pilot_n_reference"], p["pilot_n"]) == (4, 4), p
def probs(x):
    if isinstance(x, dict):
        for v in x.values():
            yield from probs(v)
    elif isinstance(x, list):
        for v in x:
            yield from probs(v)
    else:
        yield x
for k in ("p_decided", "p_verdicts", "p_false", "p_verdicts_no_difference"):
    assert all(0 <= v <= 1 for v in probs(p[k])), (k, p[k])
# Clearly faster: decided at n = 6 in nearly every simulated experiment.
assert p["p_verdicts"]["faster"][1] > 0.9, p["p_verdicts"]
assert j["recommended"]["text"] is not None, j["recommended"]
PYC
expect 0 "pairs: plan in words" "$PREREG" plan pairs.lua --pilot data/pairs \
  --sizes 3,6 --sims 200
check_grep "pairs: the pair in words" '^text / wall_s / zstd against xz: pilot ratio' "$out"

# A pilot run by the engine: the values are the machine's and are never
# asserted, only where they go.
cat >run.lua <<'LUA'
protocol {
  id = "piloted", title = "piloted", author = "t",
  arms = { { name = "x", reference = true },
           { name = "y", run = "env {cmd}" } },
  workloads = { { name = "a", runs = 4, cmd = "/bin/true" } },
  rule = { seed = 5, verdicts = {
    { "slower", ci_excludes = 1, ratio_above = 1.5 },
    { "tie", ci_within = { 0.5, 2 } } } },
}
LUA
expect 0 "pilot before registering" "$PREREG" pilot run.lua --runs 3
check_grep "pilot: a batch of 6 runs, named a pilot" \
  "pilot batch b0001: 6 runs, .* in data/piloted/pilot \(a pilot" "$out"
check "pilot: frozen batch" test -f data/piloted/pilot/batches/b0001.csv
check "pilot: batch facts with the host" \
  grep -q '"hostname"' data/piloted/pilot/batches/b0001.json
check "pilot: nothing in the experiment's batches" \
  test ! -e data/piloted/batches
expect 0 "pilot: again, nothing to do" "$PREREG" pilot run.lua --runs 3
check_grep "pilot: again says so" "nothing to do: the pilot" "$out"
expect 0 "pilot: more rounds" "$PREREG" pilot run.lua --runs 4
check_grep "pilot: the fourth round only" "pilot batch b0002: 2 runs" "$out"
expect 0 "register after the pilot" "$PREREG" register run.lua
expect 0 "status" "$PREREG" status run.lua
check_grep "status: the pilot named as such" \
  "pilot: 8 runs \(8 valid\) in data/piloted/pilot, a pilot: never counted" \
  "$out"
check_grep "status: no run counted" "status: INCOMPLETE \(0/8\)" "$out"
expect 0 "run --dry-run: the whole plan to do" "$PREREG" run run.lua --dry-run
check_grep "run's to-do: every run left" "^8 runs to do$" "$out"
expect 0 "verify, pilot files listed" "$PREREG" verify run.lua
check "MANIFEST lists the pilot's batch" \
  grep -q ' pilot/batches/b0002.csv$' data/piloted/MANIFEST
expect 0 "plan from the pilot folder" "$PREREG" plan run.lua --pilot \
  data/piloted/pilot --sims 50 --sizes 4,8 --json
check_grep "plan: from the pilot" '"kind": "pilot"' "$out"
check_grep "plan: the pilot's size" '"runs": 4' "$out"
expect 0 "run the experiment" "$PREREG" run run.lua
check_grep "run: its own first batch" "batch b0001: 8 runs" "$out"
expect 0 "analyze --json" "$PREREG" analyze run.lua --json
check_grep "analyze: 4 runs per arm, not 8" '"n": 4' "$out"
check "analyze: no pilot batch" test -z "$(grep -o 'pilot/' <<<"$out")"
expect 0 "report" "$PREREG" report run.lua --out rep
check_grep "report: the pilot, never counted" \
  "A pilot of 8 runs \(8 valid\) is kept in .pilot/." "$(cat rep/report.md)"
expect 0 "publish" "$PREREG" publish run.lua --out p.tar.gz
check "bundle: the pilot's rows" \
  sh -c 'tar -tzf p.tar.gz | grep -q "pilot/batches/b0001.csv"'
expect 0 "verify the bundle" "$PREREG" verify p.tar.gz
expect 0 "plan from the bundle" "$PREREG" plan run.lua --pilot p.tar.gz \
  --sims 50 --sizes 4,8 --json
check_grep "plan: from the bundle's counted runs" \
  '"kind": "bundle", .*"runs": 4' "$out"
chmod u+w data/piloted/pilot/batches/b0001.csv
echo "a,x,wall_s,9" >>data/piloted/pilot/batches/b0001.csv
expect 1 "verify: a changed pilot file fails" "$PREREG" verify run.lua
check_grep "verify names it" "pilot/batches/b0001.csv" "$out"

# plan --write, then register: the block is frozen, the report says it.
cp "$T/check/sheet.lua" w.lua
sed -i 's/id = "plan-check"/id = "written"/' w.lua
$PY - w.lua <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace('    { name = "shiftexp", runs = 40, metrics = { "wall_s" } },\n', '')
s = s.replace('{ name = "normal", runs = 40,', '{ name = "normal",')
open(p, "w").write(s)
PY
cp w.lua w.before
expect 0 "plan --write" "$PREREG" plan w.lua --pilot check/data/plan-check \
  --sizes 5,10,20,40 --sims 300 --power 0.5 --assurance 0.5 --write
check_grep "plan --write: says it" "w.lua: written" "$out"
check_grep "plan --write: the normal workload's runs" \
  '\{ name = "normal", runs = [0-9]+, metrics' "$(cat w.lua)"
check_grep "plan --write: the block" "plan = \{" "$(cat w.lua)"
check_grep "plan --write: the assurance and the power in it" \
  "assurance = 0.5, power_low = [0-9.]+" "$(cat w.lua)"
check_grep "plan --write: the expectation's error" \
  "expected_se = [0-9.e-]+" "$(cat w.lua)"
check "plan --write: nothing else changed" $PY - <<'PY'
import re
strip = lambda s: re.sub(r" ?runs = [0-9]+,", "", s)
new = open("w.lua").read()
at = new.index("\n\n  plan = {")
end = new.index("\n  },", at) + len("\n  },")
assert strip(new[:at] + new[end:]) == strip(open("w.before").read())
PY
expect 0 "the written sheet checks" "$PREREG" check w.lua
expect 0 "plan --write again: unchanged" "$PREREG" plan w.lua --pilot \
  check/data/plan-check --sizes 5,10,20,40 --sims 300 --power 0.5 --assurance 0.5 --write
check_grep "again: unchanged" "w.lua: unchanged" "$out"
expect 0 "register the planned sheet" "$PREREG" register w.lua
check "register froze the plan block" grep -q "plan = {" \
  data/written/versions/v0.lua
expect 1 "plan --write on a registered sheet refused" "$PREREG" plan w.lua \
  --pilot check/data/plan-check --sizes 5,10,20,40 --sims 200 --power 0.5 \
  --assurance 0.5 --write
check_grep "refused: says what to do" "only an amendment may do" "$out"
check "refused: the sheet unchanged" cmp -s w.lua data/written/versions/v0.lua
$PY - <<'PY' >w.csv
import numpy as np
g = np.random.default_rng(3)
print("workload,arm,metric,value")
for w in ("normal", "lognormal", "twovalued"):
    for a, m in (("ref", 1.0), ("arm", 1.3)):
        for x in m * g.lognormal(0, 0.1, 40):
            print("%s,%s,wall_s,%.6f" % (w, a, x))
PY
expect 0 "import into the planned sheet" "$PREREG" import w.lua w.csv
expect 0 "report of the planned sheet" "$PREREG" report w.lua --out wrep
md=$(cat wrep/report.md)
check_grep "report: how the runs were chosen" \
  "The runs per arm were chosen by .prereg plan. before registering" "$md"
check_grep "report: the sizes tried" "each size tried \(5, 10, 20, 40 runs" \
  "$md"
check_grep "report: expected against decided" \
  "The plan expected [0-9.]+ \(± [0-9.e-]+, the simulation's error\) of its 3 comparisons to decide; [0-3] of 3 did" \
  "$md"
check_grep "report: the assurance and the lowest power planned" \
  "Over the pilot's plausible truths .*it decided with a probability of at least [0-9.]+% in 50% of them" \
  "$md"

# A plan block the loader refuses.
sed 's/power = 0.5/power = 1.5/' w.lua >bad.lua
expect 2 "plan.power out of range" "$PREREG" check bad.lua
check_grep "plan.power named" "plan.power" "$out"
sed 's/source = "experiment"/source = "guess"/' w.lua >bad.lua
expect 2 "plan.pilot.source unknown" "$PREREG" check bad.lua
check_grep "plan.pilot.source named" "plan.pilot.source" "$out"
sed 's/assurance = 0.5/assurance = 1.5/' w.lua >bad.lua
expect 2 "plan.assurance out of range" "$PREREG" check bad.lua
check_grep "plan.assurance named" "plan.assurance" "$out"
done_testing 82
