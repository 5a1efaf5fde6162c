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
#   on_exit 'CMD'                      runs CMD when the script ends (in
#                                      place of trap ... EXIT, which would
#                                      replace the verdict)
#   has FILE "what" TEXT               passes when FILE holds TEXT
#                                      literally
#   quiet CMD...                       runs CMD, its output shown only
#                                      when it fails (for check)
#   in_files CMD...                    runs CMD with its output in ./out
#                                      and ./err, shown indented
#   done_testing [MIN]                 the last line of every script
#
# A script passes only if it reaches done_testing, ran at least MIN
# checks (default 1) and none failed. One that exits before (a crashed
# command under set -e, a stray exit 0) fails with the count it reached,
# so a suite whose checks never ran cannot pass. Checks are counted in a
# file, so that one made in a subshell or a pipeline counts as well (a
# failure there is not lost). check, check_grep and expect return 1 when
# they fail, so that `check ... || show_more` works.
TEST_NAME=$(basename "$0")
TEST_PID=$$
TEST_DONE=0
TEST_ON_EXIT=()
TEST_LOG=$(mktemp "${TMPDIR:-/tmp}/prereg-test-checks.XXXXXX") || {
  echo "FAIL: $TEST_NAME: cannot create the file that counts checks" >&2
  exit 1
}

ok() { echo ok >>"$TEST_LOG"; }
bad() {
  echo "not ok" >>"$TEST_LOG"
  echo "FAIL: $TEST_NAME: $*" >&2
}
check() {
  local what=$1
  shift
  if "$@"; then ok; else
    bad "$what"
    return 1
  fi
}
check_grep() {
  if printf '%s\n' "$3" | grep -Eq -- "$2"; then
    ok
  else
    bad "$1: no match for '$2' in: $(printf '%s' "$3" | head -c 1500)"
    return 1
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
    return 1
  fi
}
on_exit() { TEST_ON_EXIT+=("$1"); }
has() {
  if grep -qF -- "$3" "$1"; then ok; else
    bad "$2: '$3' not in $1"
    head -c 1500 "$1" | sed 's/^/  | /' >&2
  fi
}
quiet() {
  "$@" >"$TEST_LOG.out" 2>&1 || {
    head -c 2000 "$TEST_LOG.out" >&2
    return 1
  }
}
in_files() {
  "$@" >out 2>err
  local rc=$?
  sed 's/^/  | /' out err
  return $rc
}

# The text of every cell of a sheet of an XLSX, in order, one per line
# (libxlsxwriter's constant-memory mode writes inline strings).
xlsx_text() { # xlsx_text FILE SHEET-NUMBER
  python3 - "$1" "$2" <<'PY'
import html, re, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
sheet = z.read("xl/worksheets/sheet%s.xml" % sys.argv[2]).decode()
for t in re.findall(r'<c [^>]*t="inlineStr"><is><t[^>]*>(.*?)</t></is></c>',
                    sheet, re.S):
    print(html.unescape(t))
PY
}

# The passes and failures counted so far: "PASSED FAILED".
test_counts() {
  awk '$0 == "ok" { p++ } $0 == "not ok" { f++ }
       END { printf "%d %d\n", p, f }' "$TEST_LOG"
}

test_verdict() {
  local rc=$? i pass fail
  # Only the script's own shell judges (a subshell exiting is not the end).
  [ "${BASHPID:-$$}" = "$TEST_PID" ] || return 0
  for ((i = ${#TEST_ON_EXIT[@]} - 1; i >= 0; i--)); do
    eval "${TEST_ON_EXIT[i]}"
  done
  rm -f "$TEST_LOG.out"
  if [ "$TEST_DONE" -ne 1 ]; then
    read -r pass fail < <(test_counts)
    rm -f "$TEST_LOG"
    echo "FAIL: $TEST_NAME ended (exit $rc) before done_testing, after" \
      "$pass passed and $fail failed checks" >&2
    exit 1
  fi
  rm -f "$TEST_LOG"
}
trap test_verdict EXIT

done_testing() {
  local min=${1:-1} pass fail
  TEST_DONE=1
  read -r pass fail < <(test_counts)
  echo "$TEST_NAME: $pass passed, $fail failed"
  if [ "$(trap -p EXIT)" != "trap -- 'test_verdict' EXIT" ]; then
    rm -f "$TEST_LOG"
    echo "FAIL: $TEST_NAME: the EXIT trap was replaced (use on_exit)," \
      "so an early exit would not have been caught" >&2
    exit 1
  fi
  if [ "$fail" -ne 0 ]; then exit 1; fi
  if [ "$pass" -lt "$min" ]; then
    echo "FAIL: $TEST_NAME: only $pass checks ran, expected at least $min" >&2
    exit 1
  fi
  exit 0
}
