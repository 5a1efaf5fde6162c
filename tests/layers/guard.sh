#!/bin/bash
# guard.sh: <lua.h> compiles under protocols/' guard and is refused, with
# a message naming its owner, under reports/'.
. "$(dirname "$0")/../lib.sh"

out=$(cmake --build "$BUILD" --target layers_probe_protocols 2>&1)
check "lua.h builds where protocols/ owns it" [ $? -eq 0 ]
out=$(cmake --build "$BUILD" --target layers_probe_reports 2>&1)
rc=$?
check "lua.h in reports/ does not build" [ $rc -ne 0 ]
check_grep "the message names the owner" \
  "may be included only in protocols/" "$out"
done_testing 3
