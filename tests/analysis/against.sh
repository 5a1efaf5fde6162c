#!/usr/bin/env bash
# against.sh: a claim compares its arms with any arm (against = "ARM"),
# and every comparison carries its absolute difference. On fabricated
# values (imported, so nothing depends on the machine): a claim against an
# arm besides the reference decides as the pair's ratio says, whichever
# way round the sheet lists the two arms; diff_below and diff_at_least
# decide on the difference's interval; the difference is the medians'
# difference; a function claim sees the reference and the pairs. The
# same on values of another shape (unequal counts, drawn from a fixed
# seed), and where a reference median of 0 leaves no ratio but the
# difference and its interval.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"

T=$(mktemp -d /tmp/prereg-against-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T"

# bare (reference), bwrap, unshare: unshare costs less than bwrap. H1
# reads the pair (unshare against bwrap) as it is made, H2 turned round.
cat > iso.lua <<'LUA'
protocol {
  id = "iso", title = "Isolation", question = "What does isolation cost?",
  author = "t",
  arms = {
    { name = "bare", reference = true, run = "{cmd}" },
    { name = "bwrap", run = "bwrap {cmd}" },
    { name = "unshare", run = "unshare -r {cmd}" },
  },
  workloads = { { name = "true", source = "import", runs = 10,
                  metrics = { "wall_s" } } },
  rule = { seed = 7, resamples = 2000,
           verdicts = { { "faster", ratio_below = 1, ci_excludes = 1 },
                        { "slower", ratio_above = 1, ci_excludes = 1 } } },
  hypotheses = {
    { id = "H1", says = "unshare costs less than bwrap", workload = "true",
      metric = "wall_s", arms = { "unshare" }, against = "bwrap",
      claim = below(0.9) },
    { id = "H2", says = "bwrap costs at least 1.5x unshare", workload = "true",
      metric = "wall_s", arms = { "bwrap" }, against = "unshare",
      claim = at_least(1.5) },
    { id = "H3", says = "unshare saves over 10 ms per exec against bwrap",
      workload = "true", metric = "wall_s", arms = { "unshare" },
      against = "bwrap", claim = diff_below(-0.010) },
    { id = "H4", says = "bwrap adds at least 20 ms per exec",
      workload = "true", metric = "wall_s", arms = { "bwrap" },
      claim = diff_at_least(0.020) },
    { id = "H5", says = "bwrap adds at least 40 ms per exec",
      workload = "true", metric = "wall_s", arms = { "bwrap" },
      claim = diff_at_least(0.040) },
    { id = "H6", says = "the function sees the pair and its reference",
      claim = function(results, pairs)
        for _, p in ipairs(pairs) do
          if p.arm == "unshare" and p.reference == "bwrap" then
            return p.difference_ci_high < 0,
                   string.format("%s against %s: %.6f", p.arm, p.reference,
                                 p.difference)
          end
        end
        return nil, "no pair"
      end },
    { id = "H7", says = "results name their reference",
      claim = function(results)
        for _, r in ipairs(results) do
          if r.reference ~= "bare" then return false, r.reference end
        end
        return true, "all against bare"
      end },
  },
}
LUA
{
  echo "workload,arm,metric,value"
  for r in 0 1 2 3 4 5 6 7 8 9; do
    echo "true,bare,wall_s,0.00$r"
    echo "true,bwrap,wall_s,0.03$r"
    echo "true,unshare,wall_s,0.01$r"
  done
} > values.csv

expect 0 "check names the claim's arm" "$PREREG" check iso.lua
check_grep "check: H1 against bwrap" 'true wall_s, unshare vs bwrap: below\(0\.9\)' "$out"
check_grep "check: H3 on the difference" "diff_below\(-0\.01\): held if the difference's CI high end is < -0\.01" "$out"
"$PREREG" register iso.lua --data d >/dev/null || bad "register"
expect 0 "import the fabricated values" "$PREREG" import iso.lua values.csv --data d
expect 0 "analyze --json" "$PREREG" analyze iso.lua --data d --json
printf '%s' "$out" > iso.json
python3 - iso.json <<'PY' && ok || bad "claims against any arm and on differences, as the JSON's numbers say"
import json, re, statistics, sys
j = json.load(open(sys.argv[1]))
vals = {"bare": [r / 1000 for r in range(10)],
        "bwrap": [0.030 + r / 1000 for r in range(10)],
        "unshare": [0.010 + r / 1000 for r in range(10)]}
for r in j["results"]:
    m, mr = statistics.median(vals[r["arm"]]), statistics.median(vals[r["reference"]])
    assert r["median"] == m and r["median_reference"] == mr, r
    assert r["difference"] == r["median"] - r["median_reference"], r
    assert r["difference_ci_low"] <= r["difference"] <= r["difference_ci_high"], r
# The hypotheses' pair is made, registered, each later arm against the
# earlier one, although the rule makes no pairs.
assert j["pairs"] == "registered", j.get("pairs")
pairs = [r for r in j["results"] if r.get("pair")]
assert [(p["arm"], p["reference"]) for p in pairs] == [("unshare", "bwrap")], pairs
p = pairs[0]
assert p["exploratory"] is False, p
h = {x["id"]: x for x in j["hypotheses"]}
def outcome(lo, hi, x, at_least):
    if at_least:
        return "held" if lo >= x else "not held" if hi < x else "inconclusive"
    return "held" if hi < x else "not held" if lo >= x else "inconclusive"
# H1: unshare/bwrap below 0.9, on the pair as made.
want = outcome(p["ci_low"], p["ci_high"], 0.9, False)
assert want == "held" and h["H1"]["verdict"] == want, (h["H1"], p)
# H2: bwrap/unshare at least 1.5: the pair turned round (1 / its CI).
want = outcome(1 / p["ci_high"], 1 / p["ci_low"], 1.5, True)
assert want == "held" and h["H2"]["verdict"] == want, (h["H2"], p)
assert "turned round" in h["H2"]["reason"], h["H2"]
assert h["H2"]["claim"] == "at_least(1.5) for bwrap against unshare on true/wall_s", h["H2"]
# H3: on the pair's difference.
want = outcome(p["difference_ci_low"], p["difference_ci_high"], -0.010, False)
assert want == "held" and h["H3"]["verdict"] == want, (h["H3"], p)
# H4, H5: bwrap minus bare, about 30 ms: at least 20 held, at least 40
# not; decided on the difference's interval. bare has a 0, so some
# resamples' ratios are undefined: the ratio's interval stays, counting
# them beyond both its ends, and its note says how many.
b = [r for r in j["results"] if r["arm"] == "bwrap" and not r.get("pair")][0]
assert b["difference_ci_low"] is not None, b
assert b["ci_low"] <= b["ratio"] <= b["ci_high"], b
assert re.fullmatch(r"[1-9][0-9]* of 2000 resamples have a reference median "
                    r"of 0, so their ratio is undefined; the CI counts them "
                    r"beyond each of its ends", b["note"]), b
for hid, x in (("H4", 0.020), ("H5", 0.040)):
    want = outcome(b["difference_ci_low"], b["difference_ci_high"], x, True)
    assert h[hid]["verdict"] == want, (h[hid], b)
assert h["H4"]["verdict"] == "held" and h["H5"]["verdict"] == "not held", h
assert h["H6"]["verdict"] == "held", h["H6"]
assert h["H6"]["reason"] == "unshare against bwrap: -0.020000", h["H6"]
assert h["H7"]["verdict"] == "held", h["H7"]
PY

expect 0 "analyze" "$PREREG" analyze iso.lua --data d
check_grep "the terminal: the pair with its difference" \
  '^  true · wall_s  unshare  0\.420× \[[0-9.]+–[0-9.]+\] of bwrap, -20\.0 ms \[-24\.0,$' "$out"
check_grep "the terminal: H2 held, turned round" '^  H2  held: bwrap costs' "$out"

expect 0 "report" "$PREREG" report iso.lua --data d --out rep
check_grep "report.md: the pair's difference" \
  '^\| true · wall.?_s \| unshare \| bwrap \| -20\.0 ms \\\[-[0-9.]+, -[0-9.]+\\\] \|$' \
  "$(cat rep/report.md)"

# A claim against an arm that does not exist, or about the arm it is
# compared with, is refused with the line and what to do.
sed 's/against = "bwrap",$/against = "bwarp",/' iso.lua > typo.lua
expect 2 "against an unknown arm" "$PREREG" check typo.lua
check_grep "did you mean" 'hypotheses\[1\]\.against: no arm is named "bwarp"; did you mean "bwrap"\?' "$out"
sed 's/arms = { "unshare" }, against = "bwrap",$/arms = { "bwrap" }, against = "bwrap",/' iso.lua > self.lua
expect 2 "a claim about the arm it compares with" "$PREREG" check self.lua
check_grep "self comparison named" '"bwrap" is the arm the claim compares with \(against\)' "$out"

# An inconclusive verdict says why: each verdict rule's first condition
# that fails, in the terminal and the JSON.
cat > tie.lua <<'LUA'
protocol {
  id = "tie", title = "Tie", question = "q", author = "t",
  arms = { { name = "a", reference = true, run = "{cmd}" },
           { name = "b", run = "{cmd}" } },
  workloads = { { name = "w", source = "import", runs = 10,
                  metrics = { "wall_s" } } },
  rule = { seed = 3, resamples = 2000,
           verdicts = { { "slower", ci_excludes = 1, ratio_above = 1.10 },
                        { "tie", ci_within = { 0.98, 1.02 } } } },
}
LUA
{
  echo "workload,arm,metric,value"
  for r in 0 1 2 3 4 5 6 7 8 9; do
    echo "w,a,wall_s,1.0$r"
    echo "w,b,wall_s,1.0$((r + 1))" | sed 's/1\.010/1.10/'
  done
} > tie.csv
"$PREREG" register tie.lua --data d >/dev/null || bad "register tie"
"$PREREG" import tie.lua tie.csv --data d >/dev/null || bad "import tie"
expect 0 "analyze an undecided comparison" "$PREREG" analyze tie.lua --data d --json
why=$(printf '%s' "$out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["results"][0]["why"])')
check "the JSON says why it is inconclusive ($why)" test "$why" = \
  "slower: the CI [0.972, 1.05] contains 1; tie: the CI [0.972, 1.05] is not within [0.98, 1.02]"
expect 0 "analyze, the terminal" "$PREREG" analyze tie.lua --data d
check_grep "the terminal says why" '^  w · wall_s  b against a: slower: the CI \[0\.972, 1\.05\] contains 1; tie:' "$out"

# check warns of a dead zone (ratios between verdicts that even a ratio
# measured exactly cannot reach); the starter sheet has none.
expect 0 "check a rule with a dead zone" "$PREREG" check tie.lua
check_grep "the dead zone named" \
  '^warning: the rule decides nothing for a ratio between 1\.02 and 1\.1, even one measured exactly' "$out"
mkdir starter
(cd starter && "$PREREG" new demo >/dev/null 2>&1) || bad "prereg new"
expect 0 "check the starter sheet" "$PREREG" check starter/protocols/demo.lua
check "the starter's rule has no dead zone" \
  test "$(grep -c 'rule decides nothing' <<<"$out")" -eq 0

# A reference median of 0: no ratio (said so, never a number), while the
# difference and its interval are defined and decide diff_at_least.
cat > zero.lua <<'LUA'
protocol {
  id = "zero", title = "Zero", question = "q", author = "t",
  arms = { { name = "a", reference = true, run = "{cmd}" },
           { name = "b", run = "{cmd}" } },
  workloads = { { name = "w", source = "import", runs = 10,
                  metrics = { "sys_s" } } },
  rule = { seed = 3, resamples = 2000,
           verdicts = { { "slower", ci_excludes = 1, ratio_above = 1.10 } } },
  hypotheses = {
    { id = "H1", says = "b adds at least 5 ms of system CPU", workload = "w",
      metric = "sys_s", arms = { "b" }, claim = diff_at_least(0.005) },
  },
}
LUA
{
  echo "workload,arm,metric,value"
  for r in 0 1 2 3 4 5 6 7 8 9; do
    echo "w,a,sys_s,0"
    echo "w,b,sys_s,0.01$r"
  done
} > zero.csv
"$PREREG" register zero.lua --data d >/dev/null || bad "register zero"
"$PREREG" import zero.lua zero.csv --data d >/dev/null || bad "import zero"
expect 0 "analyze --json, a reference median of 0" "$PREREG" analyze zero.lua --data d --json
printf '%s' "$out" > zero.json
python3 - zero.json <<'PY' && ok || bad "reference median 0: no ratio, the difference and its CI, H1 decided on them"
import json, sys
j = json.load(open(sys.argv[1]))
r = j["results"][0]
assert r["median_reference"] == 0 and r["ratio"] is None and r["ci_low"] is None, r
assert r["note"] == "ratio not finite: reference median is 0", r
assert r["difference"] == r["median"] and abs(r["median"] - 0.0145) < 1e-12, r
assert r["difference_ci_low"] <= r["difference"] <= r["difference_ci_high"], r
assert 0.010 <= r["difference_ci_low"] and r["difference_ci_high"] <= 0.019, r
h = j["hypotheses"][0]
assert h["verdict"] == "held" and "difference CI low end" in h["reason"], h
PY
expect 0 "analyze, a reference median of 0" "$PREREG" analyze zero.lua --data d
check_grep "the terminal: no ratio, the difference with its CI" \
  '^ +\+14\.5 ms \[1[0-9]\.[0-9], 1[0-9]\.[0-9]\]$' "$out"
check "the terminal shows no ratio for b" grep -q 'no ratio, inconclusive' <<<"$out"
expect 0 "report, a reference median of 0" "$PREREG" report zero.lua --data d --out zrep
check_grep "report.md: the difference with its CI" \
  '^\| w · sys.?_s \| b \| a \| \+14\.5 ms \\\[1[0-9.]+, 1[0-9.]+\\\] \|$' "$(cat zrep/report.md)"

# A pair whose arm has a median of 0, read turned round: the turned
# reference median is 0, so there is no ratio (as when the sheet lists
# the arms the other way), never an infinite one that a claim could
# hold on; the difference turned round stands.
for order in "c z" "z c"; do
  set -- $order
  cat > zt.lua <<LUA
protocol {
  id = "zt", title = "Zero turned", question = "q", author = "t",
  arms = { { name = "a", reference = true, run = "{cmd}" },
           { name = "$1", run = "$1 {cmd}" }, { name = "$2", run = "$2 {cmd}" } },
  workloads = { { name = "w", source = "import", runs = 10,
                  metrics = { "sys_s" } } },
  rule = { seed = 3, resamples = 2000,
           verdicts = { { "slower", ci_excludes = 1, ratio_above = 1.10 } } },
  hypotheses = {
    { id = "H1", says = "c costs at least twice z", workload = "w",
      metric = "sys_s", arms = { "c" }, against = "z", claim = at_least(2) },
    { id = "H2", says = "c is slower than z", workload = "w",
      metric = "sys_s", arms = { "c" }, against = "z",
      claim = verdict_is("slower") },
    { id = "H3", says = "c adds 5 ms over z", workload = "w",
      metric = "sys_s", arms = { "c" }, against = "z",
      claim = diff_at_least(0.005) },
  },
}
LUA
  {
    echo "workload,arm,metric,value"
    for r in 0 1 2 3 4 5 6 7 8 9; do
      echo "w,a,sys_s,0.01$r"
      echo "w,c,sys_s,0.02$r"
      if [ "$r" -lt 4 ]; then echo "w,z,sys_s,0.001"; else echo "w,z,sys_s,0"; fi
    done
  } > zt.csv
  rm -rf dz
  "$PREREG" register zt.lua --data dz >/dev/null || bad "register zt ($order)"
  "$PREREG" import zt.lua zt.csv --data dz >/dev/null || bad "import zt ($order)"
  expect 0 "analyze --json, z's median 0, arms $order" "$PREREG" analyze zt.lua --data dz --json
  printf '%s' "$out" > "zt-${1}.json"
done
python3 - zt-c.json zt-z.json <<'PY' && ok || bad "a median of 0 turned round: no ratio, the same outcomes either way round"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
ha = {h["id"]: h for h in a["hypotheses"]}
hb = {h["id"]: h for h in b["hypotheses"]}
for k in ("H1", "H2", "H3"):
    assert ha[k]["verdict"] == hb[k]["verdict"], (k, ha[k], hb[k])
    assert "inf" not in ha[k]["reason"] and "inf" not in hb[k]["reason"], (ha[k], hb[k])
assert ha["H1"]["verdict"] == "inconclusive", ha["H1"]
assert "reference median is 0" in ha["H1"]["reason"], ha["H1"]
assert ha["H3"]["verdict"] == "held", ha["H3"]
PY

# Values of another shape (unequal counts, odd and even, spread, drawn
# from a fixed seed): the medians' difference, and every claim decided
# as the interval in the JSON says, against the reference and not.
cat > odd.lua <<'LUA'
protocol {
  id = "odd", title = "Odd", question = "q", author = "t",
  arms = { { name = "r", reference = true, run = "{cmd}" },
           { name = "x", run = "x {cmd}" }, { name = "y", run = "y {cmd}" } },
  workloads = { { name = "w", source = "import", runs = 12,
                  metrics = { "wall_s" } } },
  rule = { seed = 11, resamples = 3000,
           verdicts = { { "faster", ratio_below = 1, ci_excludes = 1 },
                        { "slower", ratio_above = 1, ci_excludes = 1 } } },
  hypotheses = {
    { id = "A", says = "y below 0.95 of x", workload = "w", metric = "wall_s",
      arms = { "y" }, against = "x", claim = below(0.95) },
    { id = "B", says = "x at least 1.5 of y", workload = "w", metric = "wall_s",
      arms = { "x" }, against = "y", claim = at_least(1.5) },
    { id = "C", says = "y saves 30 ms against x", workload = "w",
      metric = "wall_s", arms = { "y" }, against = "x", claim = diff_below(-0.03) },
    { id = "D", says = "x adds 100 ms", workload = "w", metric = "wall_s",
      arms = { "x" }, claim = diff_at_least(0.1) },
  },
}
LUA
python3 - > odd.csv <<'PY'
import random
g = random.Random(5)
print("workload,arm,metric,value")
for arm, n, mu in (("r", 7, 0.30), ("x", 12, 0.42), ("y", 9, 0.33)):
    for _ in range(n):
        print("w,%s,wall_s,%.4f" % (arm, mu * g.lognormvariate(0, 0.15)))
PY
"$PREREG" register odd.lua --data d >/dev/null || bad "register odd"
"$PREREG" import odd.lua odd.csv --data d >/dev/null || bad "import odd"
expect 0 "analyze --json, other values" "$PREREG" analyze odd.lua --data d --json
printf '%s' "$out" > odd.json
python3 - odd.json odd.csv <<'PY' && ok || bad "other values: differences and every claim as the JSON's intervals say"
import csv, json, statistics, sys
j = json.load(open(sys.argv[1]))
vals = {}
for row in csv.DictReader(open(sys.argv[2])):
    vals.setdefault(row["arm"], []).append(float(row["value"]))
res = {(r["arm"], r["reference"]): r for r in j["results"]}
for r in res.values():
    m, mr = statistics.median(vals[r["arm"]]), statistics.median(vals[r["reference"]])
    assert abs(r["median"] - m) < 1e-12 and abs(r["median_reference"] - mr) < 1e-12, r
    assert abs(r["difference"] - (m - mr)) < 1e-12, r
    assert r["n"] == len(vals[r["arm"]]), r
p = res[("y", "x")]
x = res[("x", "r")]
def outcome(lo, hi, t, at_least):
    if at_least:
        return "held" if lo >= t else "not held" if hi < t else "inconclusive"
    return "held" if hi < t else "not held" if lo >= t else "inconclusive"
want = {"A": outcome(p["ci_low"], p["ci_high"], 0.95, False),
        "B": outcome(1 / p["ci_high"], 1 / p["ci_low"], 1.5, True),
        "C": outcome(p["difference_ci_low"], p["difference_ci_high"], -0.03, False),
        "D": outcome(x["difference_ci_low"], x["difference_ci_high"], 0.1, True)}
got = {h["id"]: h["verdict"] for h in j["hypotheses"]}
assert got == want, (got, want, p, x)
# Each outcome is met: the data decide claims either way, and not all.
assert sorted(set(want.values())) == ["held", "inconclusive", "not held"], want
PY

done_testing 35
