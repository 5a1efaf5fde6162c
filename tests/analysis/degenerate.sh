#!/usr/bin/env bash
# degenerate.sh: samples an interval cannot honestly describe, on
# fabricated values (imported, so nothing depends on the machine): 3
# values per arm get no 95% interval (the level's minimum is 5) and the
# note says why, while 5 get one; a registered min_n above it still
# applies; constant values give no interval of no width; a reference
# value of 0 leaves the ratio's interval and counts the undefined
# resamples; negative values give the difference, never a ratio; check
# warns of a directional verdict without a condition on the interval.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"

T=$(mktemp -d /tmp/prereg-degenerate-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T"

# sheet ID MIN_N VERDICTS: a sheet of one imported workload per case, on
# $METRIC (wall_s, or score: a metric of kind "other", which may be
# negative).
METRIC=wall_s
sheet() {
  cat > "$1.lua" <<LUA
protocol {
  id = "$1", title = "Degenerate", question = "Is b slower?", author = "t",
  arms = { { name = "a", reference = true, run = "{cmd}" },
           { name = "b", run = "x {cmd}" } },
  $([ "$METRIC" = score ] && echo 'metrics = { score = { kind = "other" } },')
  workloads = { { name = "w", source = "import", runs = 20,
                  metrics = { "$METRIC" } } },
  rule = { seed = 3, resamples = 2000, min_n = $2,
           verdicts = { $3 } },
}
LUA
}
RULE='{ "slower", ratio_above = 1, ci_excludes = 1 },
                        { "faster", ratio_below = 1, ci_excludes = 1 }'

# values ID A-VALUES B-VALUES: import them and analyze --json into ID.json.
values() {
  { echo "workload,arm,metric,value"
    for v in $2; do echo "w,a,$METRIC,$v"; done
    for v in $3; do echo "w,b,$METRIC,$v"; done; } > "$1.csv"
  "$PREREG" register "$1.lua" --data d >/dev/null || bad "register $1"
  "$PREREG" import "$1.lua" "$1.csv" --data d >/dev/null || bad "import $1"
  "$PREREG" analyze "$1.lua" --data d --json > "$1.json" || bad "analyze $1"
}

# field ID KEY: the first result's KEY, as Python prints it.
field() {
  python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(r.get(sys.argv[2]))' "$1.json" "$2"
}

# 3 values per arm, far apart: no 95% interval, insufficient data, and
# the note says which level asks for how many.
sheet three 3 "$RULE"
values three "1.0 1.1 1.2" "2.0 2.1 2.2"
check "3 per arm: insufficient data" test "$(field three verdict)" = "insufficient data"
check "3 per arm: no CI" test "$(field three ci_low)" = None
check_grep "3 per arm: the note names the level" \
  '^3 values for b and 3 for a; a 95% interval needs at least 5 per arm: with 3 the widest interval the values allow covers the true ratio in 90% of experiments$' \
  "$(field three note)"
expect 0 "analyze, the terminal" "$PREREG" analyze three.lua --data d
check_grep "the terminal gives the note" 'needs at least 5 per arm' "$out"

# 5 per arm: an interval and a verdict.
sheet five 3 "$RULE"
values five "1.0 1.1 1.2 1.3 1.4" "2.0 2.1 2.2 2.3 2.4"
check "5 per arm: slower" test "$(field five verdict)" = slower
check "5 per arm: a CI" test "$(field five ci_low)" != None

# A registered min_n above the level's minimum keeps its meaning.
sheet high 8 "$RULE"
values high "1.0 1.1 1.2 1.3 1.4" "2.0 2.1 2.2 2.3 2.4"
check "min_n 8: insufficient data at 5" test "$(field high verdict)" = "insufficient data"
check_grep "min_n 8: the note names min_n" 'the rule needs at least 8 per arm \(min_n\)$' "$(field high note)"

# Constant values: no interval of no width, no verdict.
sheet flat 3 "$RULE"
values flat "1 1 1 1 1 1" "2 2 2 2 2 2"
check "no spread: inconclusive" test "$(field flat verdict)" = inconclusive
check "no spread: no CI" test "$(field flat ci_low)" = None
check_grep "no spread: the note says so" '^no CI: the resampled medians of b and a do not vary \(no spread\)' "$(field flat note)"

# One 0 among 7 reference values: the ratio's interval stays, and the
# resamples whose reference median is 0 are counted.
sheet zero 3 "$RULE"
values zero "0 1.0 1.1 1.2 1.3 1.4 1.5" "2.0 2.1 2.2 2.3 2.4 2.5 2.6"
check "a zero: slower" test "$(field zero verdict)" = slower
check "a zero: a CI" test "$(field zero ci_low)" != None
check_grep "a zero: the undefined resamples counted" \
  '^[1-9][0-9]* of 2000 resamples have a reference median of 0, so their ratio is undefined; the CI counts them beyond each of its ends$' \
  "$(field zero note)"

# Negative values: no ratio (never -1.00x), the difference stands.
METRIC=score
sheet signed 3 "$RULE"
values signed "-1.0 -1.1 -1.2 -1.3 -1.4" "1.0 1.1 1.2 1.3 1.4"
check "signed: no ratio" test "$(field signed ratio)" = None
check "signed: inconclusive" test "$(field signed verdict)" = inconclusive
check "signed: the difference's CI" test "$(field signed difference_ci_low)" != None
check_grep "signed: the note says why" '^no ratio: a has negative values \(as low as -1\.40?\)' "$(field signed note)"
expect 0 "analyze signed, the terminal" "$PREREG" analyze signed.lua --data d
check "the terminal shows no negative ratio" test "$(grep -c -- '-1\.00×' <<<"$out")" -eq 0

# check warns of a verdict with a direction and no interval condition.
METRIC=wall_s
sheet bare 3 '{ "faster", ratio_below = 1 }'
expect 0 "check a rule whose verdict ignores the interval" "$PREREG" check bare.lua
check_grep "the warning names the verdict" \
  '^warning: verdict "faster" \(line [0-9]+\) has a direction and no condition on the interval' "$out"
expect 0 "check a rule with ci_excludes" "$PREREG" check three.lua
check "no warning with ci_excludes" test "$(grep -c 'no condition on the interval' <<<"$out")" -eq 0

done_testing 25
