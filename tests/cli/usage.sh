#!/bin/bash
# The real binary: --version, --help, usage errors exit 2.
set -u
fail=0; pass=0
ok() { if "$@"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $*"; fi; }
out=$("$PREREG" --version); ok test "$out" = "prereg 0.1.0"
"$PREREG" --help | grep -q "^usage: prereg COMMAND"; ok test $? -eq 0
"$PREREG" run --help | grep -q "^usage: prereg run SHEET"; ok test $? -eq 0
"$PREREG" frob 2>/dev/null; ok test $? -eq 2
err=$("$PREREG" check 2>&1); ok test $? -eq 2
echo "$pass passed, $fail failed"
test $fail -eq 0
