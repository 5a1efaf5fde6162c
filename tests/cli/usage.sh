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
"$PREREG" run --help | grep -q "^usage: prereg run SHEET"
check "run --help prints the command's usage" test $? -eq 0
"$PREREG" frob 2>/dev/null
check "an unknown command exits 2" test $? -eq 2
err=$("$PREREG" check 2>&1)
check "check without a sheet exits 2 ($err)" test $? -eq 2
done_testing 5
