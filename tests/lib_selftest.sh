#!/bin/bash
# lib_selftest.sh: tests/lib.sh fails what it must fail. Small scripts on
# lib.sh run as real processes; each must pass or fail as stated, with
# the message that says why. This script alone does not stand on lib.sh:
# a broken lib.sh must not be the judge of itself.
# SPDX-License-Identifier: MIT
set -u
LIB="$(cd "$(dirname "$0")" && pwd)/lib.sh"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
passed=0
failed=0

# case WANT NAME PATTERN BODY: a script sourcing lib.sh, then BODY; it must
# exit 0 (WANT=pass) or non-zero (WANT=fail), and its output must match
# PATTERN (grep -E, its lines joined by spaces). Its scratch files go to a folder of its own, which
# must be empty afterwards.
case_() {
  local want=$1 name=$2 pattern=$3 body=$4 rc verdict
  mkdir -p "$W/tmp-$name"
  printf '. "%s"\n%s\n' "$LIB" "$body" >"$W/$name.sh"
  TMPDIR="$W/tmp-$name" bash "$W/$name.sh" >"$W/$name.out" 2>&1
  rc=$?
  verdict=fail
  [ "$rc" -eq 0 ] && verdict=pass
  if [ "$verdict" != "$want" ]; then
    failed=$((failed + 1))
    echo "FAIL: $name: exit $rc, expected to $want:" >&2
    sed 's/^/  | /' "$W/$name.out" >&2
  elif ! tr '\n' ' ' <"$W/$name.out" | grep -Eq -- "$pattern"; then
    failed=$((failed + 1))
    echo "FAIL: $name: no '$pattern' in:" >&2
    sed 's/^/  | /' "$W/$name.out" >&2
  elif [ -n "$(ls -A "$W/tmp-$name")" ]; then
    failed=$((failed + 1))
    echo "FAIL: $name: left files behind: $(ls -A "$W/tmp-$name")" >&2
  else
    passed=$((passed + 1))
    echo "ok    $name ($want, exit $rc)"
  fi
}

# (a) a script with no checks
case_ fail no-checks 'only 0 checks ran, expected at least 1' \
  'done_testing'
# (b) one that exits 0 before done_testing, and one that just ends there
case_ fail early-exit 'ended \(exit 0\) before done_testing, after 1 passed' \
  'check "one" true
exit 0
check "never" true
done_testing'
case_ fail no-done-testing 'ended \(exit 0\) before done_testing' \
  'check "one" true'
# (c) a failing check, a failing check_grep, an exit code not expected
case_ fail failing-check 'FAIL: failing-check.sh: the second' \
  'check "the first" true
check "the second" false
check "the third" true
done_testing'
case_ fail failing-grep "FAIL: failing-grep.sh: greeting: no match for '\^bye'" \
  'check_grep "greeting" "^bye" "hello"
done_testing'
case_ fail failing-expect 'FAIL: failing-expect.sh: exits 2: exit 1, expected 2: said no' \
  'expect 2 "exits 2" sh -c "echo said no; exit 1"
done_testing'
# (d) fewer checks than the script's minimum
case_ fail below-minimum 'only 2 checks ran, expected at least 3' \
  'check "one" true
check "two" true
done_testing 3'
# (e) a good script passes, and says how many checks it ran
case_ pass good 'good.sh: 4 passed, 0 failed' \
  'check "true" true
check_grep "grep" "^h.l+o$" "hello"
expect 3 "exit 3" sh -c "exit 3"
check "expect kept the output" test "$out" = ""
done_testing 4'
# A failure in a subshell or a pipeline is not lost.
case_ fail failing-subshell 'FAIL: failing-subshell.sh: inside' \
  'check "outside" true
( check "inside" false )
done_testing'
case_ fail failing-pipeline 'FAIL: failing-pipeline.sh: in a pipe' \
  'check "outside" true
echo x | while read -r _; do check "in a pipe" false; done
done_testing'
case_ pass counted-subshell 'counted-subshell.sh: 3 passed, 0 failed' \
  'check "outside" true
( check "inside" true )
echo x | while read -r _; do check "in a pipe" true; done
done_testing 3'
# A command that fails under set -e ends the script before its verdict.
case_ fail set-e 'ended \(exit 1\) before done_testing, after 1 passed' \
  'set -e
check "one" true
false
done_testing'
# A script of its own EXIT trap would lose the verdict: refused.
case_ fail own-trap 'the EXIT trap was replaced' \
  'trap "true" EXIT
check "one" true
done_testing'
# on_exit runs at the end, last registered first, and a failure stays one.
case_ fail on-exit-failing 'second-cleanup.*first-cleanup' \
  'on_exit "echo first-cleanup"
on_exit "echo second-cleanup"
check "fails" false
done_testing'
case_ pass on-exit-passing 'on-exit-passing.sh: 1 passed.*cleanup-ran' \
  'on_exit "echo cleanup-ran; false"
check "passes" true
done_testing'
# check returns 1 when it fails, so that `check ... || more` works.
case_ fail check-status 'more shown' \
  'check "fails" false || echo "more shown"
done_testing'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -eq 16 ] || exit 1
exit 0
