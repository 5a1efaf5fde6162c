#!/bin/bash
# usage.sh: the real binary: --version, --help, usage errors exit 2.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?PREREG must name the prereg binary}"
out=$("$PREREG" --version)
check "--version prints the version ($out)" test "$out" = "prereg 0.1.0"
"$PREREG" --help | grep -q "^usage: prereg COMMAND"
check "--help prints the program's usage" test $? -eq 0
"$PREREG" --help | grep -q "^Each command's own options: prereg COMMAND --help\.$"
check "--help points at each command's --help" test $? -eq 0
"$PREREG" run --help | grep -q "^usage: prereg run SHEET"
check "run --help prints the command's usage" test $? -eq 0
"$PREREG" frob 2>/dev/null
check "an unknown command exits 2" test $? -eq 2
err=$("$PREREG" check 2>&1)
check "check without a sheet exits 2 ($err)" test $? -eq 2
# Did you mean: a typo of a command or an option names the nearest one.
expect 2 "a misspelt command exits 2" "$PREREG" anaylze x.lua
check_grep "a misspelt command: did you mean" \
  "^prereg: unknown command 'anaylze'; did you mean 'analyze'\?" "$out"
expect 2 "a misspelt option exits 2" "$PREREG" run x.lua --dry-rn
check_grep "a misspelt option: did you mean" \
  "unknown option '--dry-rn'; did you mean '--dry-run'\?" "$out"
expect 2 "a misspelt option of the command named" "$PREREG" analyze --jsn x.lua
check_grep "the command's option is the one suggested" \
  "did you mean '--json'\?" "$out"
expect 2 "a word far from every command" "$PREREG" frobnicate
check "far from every command: no guess" test "$out" = \
  "prereg: unknown command 'frobnicate'; see 'prereg --help'"
done_testing 14
