#!/bin/bash
# checksrc.sh: scripts/checksrc.py fails what it must: a planted atoi, a
# planted 90-line function, a line of 80 columns; it passes a clean file
# and the same words in comments and strings; a function on the pending
# list is skipped and counted, and a stale entry is named.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${SRC:?}"
T=$(mktemp -d)
on_exit 'rm -rf "$T"'
cs() { python3 "$SRC/scripts/checksrc.py" "$@"; }

# body N: N lines of a function body.
body() { for ((i = 0; i < $1; i++)); do echo "  x += $i;"; done; }
{
  echo '#include <stdlib.h>'
  echo '/* atoi(s) and strcat(a, b) are banned: strtol, snprintf. */'
  echo 'static int f(const char *s) {'
  echo '  const char *m = "sprintf(x) gets(y)";'
  echo "  char c = '(';"
  echo '  int x = (int)strtol(s, NULL, 10) + (m[0] == c) + (int)snprintf(NULL, 0, "a");'
  body 70
  echo '  return x;'
  echo '}'
} | sed 's/ + (int)snprintf(NULL, 0, "a")//' > "$T/clean.c"
expect 0 "a clean file passes (comments and strings may name banned calls)" \
  cs "$T/clean.c"
check_grep "and says what it checked" "^checksrc: 1 files, no banned call" "$out"

sed 's/(int)strtol(s, NULL, 10)/atoi(s)/' "$T/clean.c" > "$T/atoi.c"
expect 1 "a planted atoi fails" cs "$T/atoi.c"
check_grep "naming the file, the line and the call" "atoi.c:6: atoi\(\) is banned" "$out"

for fn in atof sprintf strcpy strcat gets; do
  printf 'void g(char *a) { %s (a); }\n' "$fn" > "$T/$fn.c"
  expect 1 "a planted $fn fails" cs "$T/$fn.c"
done

{
  echo 'static int long_one(void) {'
  echo '  int x = 0;'
  body 86
  echo '  return x;'
  echo '}'
} > "$T/long.c"
check "the planted function is 90 lines" test "$(wc -l < "$T/long.c")" -eq 90
expect 1 "a planted 90-line function fails" cs "$T/long.c"
check_grep "naming it and its length" "long.c:1: function long_one is 90 lines \(at most 80\)" "$out"
{
  echo 'static int just_fits(void) {'
  body 78
  echo '}'
} > "$T/fits.c"
expect 0 "an 80-line function passes" cs "$T/fits.c"
{
  echo 'static const char *'
  echo 'split_signature(int a,'
  echo '                int b) {'
  body 78
  echo '}'
} > "$T/sig.c"
expect 1 "a function's signature lines count" cs "$T/sig.c"
check_grep "from its first line" "sig.c:1: function split_signature is 82 lines" "$out"

printf 'int y; /* %s */\n' "$(printf 'w%.0s' $(seq 1 67))" > "$T/wide.c"
expect 1 "a line of 80 columns fails" cs "$T/wide.c"
check_grep "with its width" "wide.c:1: line of 80 columns \(at most 79\)" "$out"

printf 'd/long.c:long_one\n# a comment\nd/long.c:gone\n' > "$T/pending.txt"
mkdir "$T/d" && cp "$T/long.c" "$T/d/long.c"
out=$(cd "$T" && cs --pending pending.txt d/long.c 2>&1) && rc=0 || rc=$?
check "a pending function is skipped (exit $rc)" test "$rc" -eq 0
check_grep "and counted, by name" "skipped 1 pending function over 80 lines: d/long.c:long_one \(90 lines\)" "$out"
check_grep "an entry that matches nothing is named" "pending d/long.c:gone: no such function" "$out"
printf 'no-colon-here\n' > "$T/broken.txt"
out=$(cs --pending "$T/broken.txt" "$T/clean.c" 2>&1) && rc=0 || rc=$?
check "a malformed pending list is refused (exit $rc)" test "$rc" -ne 0

# The checkout itself, as the checksrc test runs it.
expect 0 "the checkout passes" cs --pending "$SRC/scripts/checksrc-pending.txt"
check_grep "with no function over the cap, none skipped" "no function over 80 lines$" "$out"
done_testing 23
