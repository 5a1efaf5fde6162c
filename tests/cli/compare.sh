#!/usr/bin/env bash
# compare.sh: prereg compare through the real binary. Verdicts and ratios
# are checked only on a metric the commands write themselves (fixed
# values through $PREREG_METRICS), never on measured time; the sleep
# commands show the mechanics (exit 0, every line exploratory, the JSON,
# the sheet that check accepts and register freezes).
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"

T=$(mktemp -d /tmp/prereg-compare-test-XXXXXX)
on_exit 'rm -rf "$T"'
cd "$T"
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR" protocols
V1='echo v=1 > $PREREG_METRICS'
V2='echo v=2 > $PREREG_METRICS'

# Every line of standard output says exploratory.
all_marked() { ! grep -qv '^exploratory: ' "$1"; }

# Fabricated values: the ratio is exact; constant values have no spread,
# so no interval (one of no width is none) and no verdict.
expect 0 "two commands with a fabricated metric" \
  "$PREREG" compare -n one "$V1" -n two "$V2" --metric v --runs 5 \
  --warmup 0 --json
check_grep "JSON says exploratory" '"exploratory": true' "$out"
check_grep "ratio 2 of two to one" '"ratio": 2\.0,' "$out"
check_grep "no interval of no width" '"ci_low": null,' "$out"
check_grep "no spread, said" '"note": "no CI: the resampled medians of two and one do not vary \(no spread\)' "$out"
check_grep "so inconclusive" '"rule_verdict": "inconclusive"' "$out"
check_grep "5 values: no interval of the median" '"arm": "one", "n": 5, "median": 1, "ci_low": null, "ci_high": null, "note": "no 95% CI of the median: one median needs at least 6 values for one \(with 5, \[min, max\] covers the true median in 93\.75% of samples\)"' "$out"
# Values that vary within 1.1 to 1.9 and 2.1 to 2.9 (by the run's pid):
# whatever they are, 5 per arm give an interval above 1, and the
# starter's slower, read as higher on a metric of no kind.
W1='echo v=1.$(($$ % 9 + 1)) > $PREREG_METRICS'
W2='echo v=2.$(($$ % 9 + 1)) > $PREREG_METRICS'
expect 0 "two varying commands" "$PREREG" compare -n one "$W1" -n two "$W2" \
  --metric v --runs 5 --warmup 0 --json
check_grep "the starter rule's slower" '"rule_verdict": "slower"' "$out"
check_grep "read as higher on a metric of no kind" '"verdict": "higher"' \
  "$out"
expect 0 "two varying commands, 3 rounds" "$PREREG" compare -n one "$W1" \
  -n two "$W2" --metric v --runs 3 --warmup 0 --json
check_grep "3 rounds: no 95% interval" '"rule_verdict": "insufficient data"' "$out"
check_grep "where the data are" "\"exploratory_data\": \"$TMPDIR/prereg-compare-" "$out"

expect 0 "--reference two" "$PREREG" compare -n one "$V1" -n two "$V2" \
  --metric v --runs 5 --warmup 0 --reference two
echo "$out" > ref.out
check "every line exploratory" all_marked ref.out
check_grep "one is 0.5x of two, no CI" '0\.500×, no CI, inconclusive' "$out"
check_grep "data folder named" "data kept in $TMPDIR/prereg-compare-" "$out"

# One command alone: described, no reference needed.
expect 0 "one command" "$PREREG" compare 'echo v=3 > $PREREG_METRICS' \
  --metric v --runs 3 --warmup 0
echo "$out" > one.out
check "one command: every line exploratory" all_marked one.out
check_grep "described: 3 values, no interval of the median, and why" \
  'v: median 3\.00, no 95% CI of the median: one median needs at least 6 values for one \(with 3, \[min, max\] covers the true median in 75% of samples\), IQR 3\.00 to 3\.00' \
  "$out"
# Values 1.1, 1.2, ... in the order of the runs: 9 give the order
# statistics 2 and 8 (2 P(B <= 1) = 20/512 <= 5%), constant ones none.
CNT='n=$(cat '"$T"'/cnt 2>/dev/null || echo 0); n=$((n + 1)); echo $n > '"$T"'/cnt; echo v=1.$n > $PREREG_METRICS'
expect 0 "one command, 9 varying values" "$PREREG" compare "$CNT" \
  --metric v --runs 9 --warmup 0
check_grep "9 values: the distribution-free interval" \
  'v: median 1\.50, 95% CI of the median \[1\.20, 1\.80\], IQR' "$out"
expect 0 "one command, 9 equal values" "$PREREG" compare \
  'echo v=3 > $PREREG_METRICS' --metric v --runs 9 --warmup 0
check_grep "9 equal values: no interval of no width" \
  'v: median 3\.00, no 95% CI of the median: the values it would span do not vary \(no spread\)' \
  "$out"

# A scan: one arm per value; {n} replaced, other braces kept literal.
expect 0 "--parameter-scan" "$PREREG" compare --parameter-scan n 1 3 \
  'sh -c "echo v={n} > \$PREREG_METRICS; : {x}"' --metric v --runs 3 \
  --warmup 0 --json
check_grep "scan: ratio 3 for n=3" '"ratio": 3\.0,' "$out"
check_grep "scan: literal brace kept" '"command": "sh -c \\"echo v=2 > \\\\\$PREREG_METRICS; : \{x\}\\""' "$out"

# The sleep example's mechanics (no assertion on the measured ratio).
expect 0 "sleep 0.01 against sleep 0.03" "$PREREG" compare 'sleep 0.01' \
  'sleep 0.03' --runs 5
echo "$out" > sleep.out
check "sleep: every line exploratory" all_marked sleep.out
check_grep "sleep: a ratio of sleep 0.03" 'sleep-0\.03 *$' "$out"
check_grep "sleep: a ratio line" '[0-9.]+× \[' "$out"
expect 0 "-L t 0.01,0.03 --json" "$PREREG" compare -L t 0.01,0.03 \
  'sleep {t}' --runs 3 --json
check_grep "-L: arms named by their commands" '"arm": "sleep-0.03", "command": "sleep 0.03"' "$out"
check_grep "-L: a ratio in the analyze --json shape" '"ratio": [0-9]' "$out"
check_grep "-L: reference" '"reference": "sleep-0.01"' "$out"

# --sheet FILE: the sheet it ran, which check accepts and register
# freezes as it is.
expect 0 "--sheet" "$PREREG" compare -n one "$V1" -n two "$V2" \
  --metric v --runs 3 --warmup 0 --sheet protocols/quick.lua \
  --export-markdown quick.md
check "the sheet was written" test -f protocols/quick.lua
dir=$(sed -n 's/^exploratory: data kept in \([^ ]*\) .*/\1/p' <<<"$out")
check "the sheet is the text that ran" cmp protocols/quick.lua \
  "$dir/quick.lua"
check "check accepts it" quiet "$PREREG" check protocols/quick.lua
check "register freezes it" quiet "$PREREG" register protocols/quick.lua \
  --data "$T/data"
check "frozen as it is" cmp protocols/quick.lua "$T/data/quick/versions/v0.lua"
has quick.md "markdown marked exploratory" "| exploratory | echo v=2"
expect 2 "--sheet never overwrites" "$PREREG" compare "$V1" "$V2" \
  --metric v --runs 3 --sheet protocols/quick.lua

# Bad input: exit 2, nothing measured.
expect 2 "--runs 0" "$PREREG" compare true --runs 0
expect 2 "-n names nothing" "$PREREG" compare true -n lonely
expect 2 "a bad -n name" "$PREREG" compare -n 'a b' true
expect 2 "--data" "$PREREG" --data d compare true
expect 2 "unknown option" "$PREREG" compare --frobnicate true
expect 2 "-L command without the parameter" "$PREREG" compare -L t 1,2 true
expect 2 "--reference of no arm" "$PREREG" compare true false \
  --reference nope
expect 0 "--help" "$PREREG" compare --help
check_grep "help names -L" "-L NAME V1,V2" "$out"

done_testing 52
