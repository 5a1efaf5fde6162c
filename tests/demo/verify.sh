#!/bin/bash
# verify.sh: the committed example, studies/sandbox-cost (registered,
# amended, run in full on one machine, frozen and reported), still
# verifies: every frozen file against its manifest and the sheet's chain
# of amendments, with its protocols/sandbox-cost.lua the newest version.
# A copy is checked, so that the test never writes into the source tree;
# the copy with one byte changed must fail.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/lib.sh"
: "${PREREG:?PREREG must name the prereg binary}"
cp -R "$SRC/studies/sandbox-cost/data/sandbox-cost" "$tmp/sandbox-cost"
"$PREREG" verify "$SRC/studies/sandbox-cost/protocols/sandbox-cost.lua" --data "$tmp" > "$tmp/verify.out" 2>&1
rc=$?
check "prereg verify the committed data folder (exit $rc: $(head -c 300 "$tmp/verify.out"))" test $rc -eq 0
newest=$(ls "$tmp"/sandbox-cost/versions/v*.lua | sort -V | tail -n 1)
check "the chain has the registered version and its amendments ($(basename "$newest"))" \
  test -f "$tmp/sandbox-cost/versions/v1.lua" -a "$newest" != "$tmp/sandbox-cost/versions/v0.lua"
check "the sheet is the newest version, byte for byte" \
  cmp -s "$SRC/studies/sandbox-cost/protocols/sandbox-cost.lua" "$newest"
"$PREREG" analyze "$SRC/studies/sandbox-cost/protocols/sandbox-cost.lua" --json --data "$tmp" > "$tmp/a.json" 2>&1
rc=$?
check "analyze the committed data (exit $rc)" test $rc -eq 0
n=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(len({(r["workload"], r["metric"], r["arm"]) for r in d["results"]
           if r["arm"] in ("bwrap", "runc", "gvisor") and r["n"] >= 10}))' "$tmp/a.json")
check "results for the three sandboxes on all seven workload metrics ($n)" test "$n" = 21
# One changed byte in a frozen batch must be caught.
f=$(ls "$tmp"/sandbox-cost/batches/*.csv | tail -n 1)
chmod u+w "$f"
printf 'x' | dd of="$f" bs=1 seek=100 conv=notrunc 2> /dev/null
"$PREREG" verify "$SRC/studies/sandbox-cost/protocols/sandbox-cost.lua" --data "$tmp" > "$tmp/verify2.out" 2>&1
rc=$?
check "a changed byte fails verify (exit $rc)" test $rc -ne 0
check "and verify names the file" grep -q "$(basename "$f")" "$tmp/verify2.out"
done_testing 7
