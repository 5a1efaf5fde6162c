# lib.sh: what every shell test sources: counted checks, and a verdict
# that fails a script whose checks did not all run.
# SPDX-License-Identifier: MIT
#
#   . "$(dirname "$0")/../lib.sh"
#   check "what it shows" CMD...       passes when CMD exits 0
#   check_grep "what" PATTERN TEXT     passes when TEXT matches PATTERN
#                                      (grep -E)
#   expect CODE "what" CMD...          passes when CMD exits with CODE;
#                                      its output is kept in $out
#   ok / bad "what"                    count a pass or a failure by hand
#   done_testing [MIN]                 the last line of every script
#
# A script passes only if it reaches done_testing, ran at least MIN
# checks (default 1) and none failed. One that exits before (a crashed
# command under set -e, a stray exit 0) fails with the count it reached,
# so a suite whose checks never ran cannot pass.
TEST_PASS=0
TEST_FAIL=0
TEST_DONE=0
TEST_NAME=$(basename "$0")

ok() { TEST_PASS=$((TEST_PASS + 1)); }
bad() {
  TEST_FAIL=$((TEST_FAIL + 1))
  echo "FAIL: $TEST_NAME: $*" >&2
}
check() {
  local what=$1
  shift
  if "$@"; then ok; else bad "$what"; fi
}
check_grep() {
  if printf '%s\n' "$3" | grep -Eq -- "$2"; then
    ok
  else
    bad "$1: no match for '$2' in: $(printf '%s' "$3" | head -c 1500)"
  fi
}
expect() {
  local code=$1 what=$2 rc
  shift 2
  out=$("$@" 2>&1) && rc=0 || rc=$?
  if [ "$rc" -eq "$code" ]; then
    ok
  else
    bad "$what: exit $rc, expected $code: $(printf '%s' "$out" | head -c 1500)"
  fi
}

test_verdict() {
  local rc=$?
  if [ "$TEST_DONE" -ne 1 ]; then
    echo "FAIL: $TEST_NAME ended (exit $rc) before done_testing, after" \
      "$TEST_PASS passed and $TEST_FAIL failed checks" >&2
    exit 1
  fi
}
trap test_verdict EXIT

done_testing() {
  local min=${1:-1}
  TEST_DONE=1
  echo "$TEST_NAME: $TEST_PASS passed, $TEST_FAIL failed"
  if [ "$TEST_FAIL" -ne 0 ]; then exit 1; fi
  if [ "$((TEST_PASS))" -lt "$min" ]; then
    echo "FAIL: $TEST_NAME: only $TEST_PASS checks ran, expected at least $min" >&2
    exit 1
  fi
  exit 0
}
