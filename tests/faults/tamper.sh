#!/usr/bin/env bash
# tamper.sh: files of the data folder deleted or edited while `run` works.
# The run must not crash or hide it, and `verify` must fail naming every
# file touched: frozen batches, facts, registered versions, the MANIFEST,
# kept outputs, and the batch being written.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/lib.sh"

ln -s "$(command -v sleep)" "$T/nap"
sheet s.lua tp \
  "{ name = \"quick\", runs = 2, cmd = \"echo out\" }" \
  "{ name = \"slow\", runs = 12, cmd = \"$T/nap 0.08\" }"

# A fresh experiment with one frozen batch; then `run --only slow` in the
# background, and $1 (a function) tampering while it works.
fresh() {
  D=$T/data-$1
  "$PREREG" register s.lua --data "$D" >/dev/null || bad "register"
  "$PREREG" run s.lua --data "$D" --only quick >/dev/null 2>&1 || bad "first batch"
  E=$D/tp
}
during_run() {
  "$PREREG" run s.lua --data "$D" --only slow >run.out 2>run.err &
  local pid=$!
  # Tamper once the second batch holds its first whole row (its header
  # is written before any run ends): an event, not a moment, which a
  # loaded machine would shift. Thirty-five runs of 0.08 s are still to
  # come then.
  for ((i = 0; i < 6000; i++)); do
    [ "$(wc -l <"$E/batches/b0002.csv" 2>/dev/null)" -ge 2 ] 2>/dev/null && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.02
  done
  check "the second batch had a row when tampered with" \
    [ "$(wc -l <"$E/batches/b0002.csv" 2>/dev/null)" -ge 2 ]
  "$@"
  wait $pid; RUN_RC=$?
  check "run survives without a crash (rc=$RUN_RC)" [ $RUN_RC -le 1 ]
  check "no sanitizer or crash report" bash -c "! grep -Eq 'Sanitizer|Segmentation|core dumped' run.err"
}
# verify must fail (exit 1) and name each given path.
verify_names() {
  "$PREREG" verify s.lua --data "$D" >verify.txt 2>&1; local rc=$?
  check "$CASE: verify exit 1 (rc=$rc)" [ $rc -eq 1 ]
  # The tallies of files that failed their checks are no one's result:
  # the status line says so.
  check "$CASE: the status line says UNVERIFIED" \
    grep -Eq '^status: ([A-Z ]+ · )*UNVERIFIED|^status: unknown' verify.txt
  local p
  for p in "$@"; do
    check "$CASE: verify names $p" grep -q "$p" verify.txt
  done
  grep -v '^ok\|^note' verify.txt | head -4 | sed 's/^/  verify: /'
}

scenario "frozen batch edited, its facts deleted, an output deleted"
CASE="frozen files"
fresh 1
edit_frozen() {
  chmod u+w "$E/batches/b0001.csv" && echo "forged,row" >> "$E/batches/b0001.csv"
  rm -f "$E/batches/b0001.json"
  chmod u+w "$E/batches/b0001" && rm -f "$E"/batches/b0001/b0001-0001.stdout
}
during_run edit_frozen
verify_names batches/b0001.csv batches/b0001.json batches/b0001/b0001-0001.stdout

scenario "registered version edited"
CASE="registered version"
fresh 2
edit_version() { chmod u+w "$E/versions/v0.lua" && echo "-- edited" >> "$E/versions/v0.lua"; }
during_run edit_version
verify_names versions/v0.lua

scenario "MANIFEST deleted"
CASE="MANIFEST deleted"
fresh 3
during_run rm -f "$E/MANIFEST"
# The run's freeze may write a new MANIFEST; the files of b0001 are then
# no longer in it, or it is missing: either way verify says which.
verify_names batches/b0001.csv

scenario "batch being written: edited"
CASE="batch in progress edited"
fresh 4
# The first row's arm turned into another (whichever arm ran first).
edit_live() {
  local was; was=$(sed -n 2p "$E/batches/b0002.csv")
  sed -i '2{s/,slow,a,/,slow,b,/;t;s/,slow,b,/,slow,c,/;t;s/,slow,c,/,slow,a,/}' "$E/batches/b0002.csv"
  check "$CASE: its first row was edited" [ "$(sed -n 2p "$E/batches/b0002.csv")" != "$was" ]
}
during_run edit_live
check "$CASE: run fails or verify fails" bash -c \
  "[ $RUN_RC -ne 0 ] || ! '$PREREG' verify s.lua --data '$D' >/dev/null 2>&1"
if [ $RUN_RC -eq 0 ] && "$PREREG" verify s.lua --data "$D" >/dev/null 2>&1; then
  echo "  an edit of the batch in progress was frozen as if prereg had written it"
fi

scenario "batch being written: deleted"
CASE="batch in progress deleted"
fresh 5
during_run rm -f "$E/batches/b0002.csv"
check "$CASE: run reports it (rc=$RUN_RC)" [ $RUN_RC -eq 1 ]
check "$CASE: message names the batch" grep -q "b0002" run.err
tail -n 1 run.err | sed 's/^/  message: /'
"$PREREG" verify s.lua --data "$D" >verify.txt 2>&1; rc=$?
check "$CASE: verify does not pass silently (rc=$rc)" \
  bash -c "[ $rc -ne 0 ] || grep -q b0002 verify.txt"

check "no command left" gone_within "$T/nap"
report_scenarios
done_testing 32
