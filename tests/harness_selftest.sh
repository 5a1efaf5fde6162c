#!/bin/bash
# harness_selftest.sh: harness.h fails what it must: a unit test that ran
# no check fails, a failed check is named (by its condition, or by the
# name given), a skip is counted and printed, and passing checks pass.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/lib.sh"
: "${BUILD:?}"
probe=$BUILD/tests/harness_probe
expect 1 "a test that ran no check fails" "$probe" none
check_grep "saying so" "no check ran" "$out"
check_grep "with its counts" "^0 passed, 0 failed, 0 skipped$" "$out"
expect 1 "failed checks fail" "$probe" fail
check_grep "CHECK is named by its condition, with file and line" \
  "harness_probe.c:[0-9]+: check failed: two == 3" "$out"
check_grep "CHECK_NAMED by its name" "check failed: two is odd" "$out"
check_grep "CHECK_STR by its expressions and values" \
  'check failed: "a" equals "b"' "$out"
check_grep "CHECK_NEAR too" "check failed: 1.0 is within 0.1 of 1.5" "$out"
check_grep "counted" "^0 passed, 4 failed, 0 skipped$" "$out"
expect 0 "a skip and a passing check pass" "$probe" skip
check_grep "the skip is printed with why" \
  "harness_probe.c:[0-9]+: skipped: no such device here" "$out"
check_grep "and counted" "^1 passed, 0 failed, 1 skipped$" "$out"
expect 0 "passing checks pass" "$probe" pass
check_grep "all four counted" "^4 passed, 0 failed, 0 skipped$" "$out"
out=$(HARNESS_VERBOSE=1 "$probe" pass 2>&1)
check_grep "HARNESS_VERBOSE=1 lists each check by name" \
  "^ok .*harness_probe.c:[0-9]+: two is even$" "$out"
done_testing 15
