#!/usr/bin/env bash
# plan_looks.sh: `prereg plan --looks` through the real binary: the
# sequential design's verdicts, false directional rate and expected runs
# against an independent NumPy simulation (plan_looks_check.py, imported
# values, no timing); the text table with its looks column; looks that do
# not increase refused.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}" "${SRC:?}"
PY=/usr/bin/python3
T=$(mktemp -d /tmp/prereg-plan-looks.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
export PREREG_NOW=1792540800 # 2026-10-21T00:00:00Z

PREREG_THREADS=2 $PY "$SRC/tests/analysis/plan_looks_check.py" "$PREREG" \
  "$T" >check.txt 2>&1
rc=$?
while IFS= read -r line; do
  case $line in
    "ok    "*) ok ;;
    "FAIL  "*) bad "${line#FAIL  }" ;;
  esac
done <check.txt
check "plan_looks_check.py exits 0 (exit $rc)" test $rc -eq 0 ||
  tail -n 20 check.txt >&2
check "plan_looks_check.py made its checks" \
  test "$(grep -c '^ok    ' check.txt)" -ge 35

expect 0 "plan --looks, text" "$PREREG" plan sheet.lua \
  --pilot data/looks-check --sizes 5,30 --looks 5,10,30 --sims 200
check_grep "plan --looks: a looks column beside the fixed sizes" \
  'runs per arm +5 +30 +looks' "$out"
check_grep "plan --looks: the looks and their confidence" \
  'looks at 5, 10, 30 runs per arm, each look.s interval at confidence 0.983333' \
  "$out"
check_grep "plan --looks: expected runs per arm" \
  'expected runs +5\.0 +30\.0 +[0-9.]+' "$out"
expect 2 "plan --looks not increasing" "$PREREG" plan sheet.lua \
  --pilot data/looks-check --looks 10,5
check_grep "plan --looks not increasing: says so" 'looks must increase' \
  "$out"
expect 2 "plan --looks with one look" "$PREREG" plan sheet.lua \
  --pilot data/looks-check --looks 10
check_grep "plan --looks with one look: 2 to 20" '2 to 20 looks' "$out"
done_testing 43
