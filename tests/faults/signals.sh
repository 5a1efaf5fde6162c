#!/usr/bin/env bash
# signals.sh: SIGINT in the middle of a run, and commands that misbehave:
# start daemons, ignore SIGTERM, print gigabytes, close their stdout.
# Every time: the run ends, finished rows are kept, no process of the run
# is left (each command line carries a unique marker, the scratch path),
# verify passes.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/lib.sh"

ln -s "$(command -v sleep)" "$T/nap"     # "$T/nap" marks our processes
since() { awk -v t0="$1" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.3f", t1 - t0 }'; }
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
cat > "$T/daemon.sh" <<SH
#!/bin/sh
# Double fork and a new session: the classic daemon, holding no pipe.
setsid "$T/nap" 300 </dev/null >/dev/null 2>&1 &
# And one that keeps our stdout open forever.
"$T/nap" 301 &
echo started
SH
cat > "$T/stubborn.sh" <<SH
#!/bin/sh
trap '' TERM
"$T/nap" 302 &
trap '' TERM
while :; do "$T/nap" 0.05; done
SH
cat > "$T/closer.sh" <<SH
#!/bin/sh
exec >&- 2>&-
"$T/nap" 0.1
echo lost 2>/dev/null
exit 0
SH
# A command whose first call (the warm-up) works and whose runs misbehave:
# a run that fails from the very start would be a setup mistake, which
# stops run before the plan; here each run is to be recorded as it ends.
cat > "$T/second.sh" <<'SH'
#!/bin/sh
mark="$PREREG_ORIGIN/mark.$1.$PREREG_ARM"
shift
[ -e "$mark" ] || { : > "$mark"; exit 0; }
exec "$@"
SH
# Naps as long as napfor.s says when it starts: 0.3 s, or 300 s once the
# SIGINT below is due, so that the signal always finds a command running
# that would outlast any machine's slowness.
cat > "$T/napfor.sh" <<SH
#!/bin/sh
exec "$T/nap" "\$(cat "$T/napfor.s")"
SH
chmod +x "$T"/*.sh
D=$T/data
# rows: how many nap rows the batches hold so far.
rows() { cat "$D"/si/batches/b*.csv 2>/dev/null | grep -c ',nap,'; }

# --- SIGINT mid-run ------------------------------------------------------
# After 1, 2 and 3 more finished runs, in the middle of the next (a 300 s
# nap): not a moment in seconds, which a loaded machine would shift.
sheet int.lua si "{ name = \"nap\", runs = 6, cmd = \"$T/napfor.sh\" }"
"$PREREG" register int.lua --data "$D" >/dev/null || bad "register"
for k in 1 2 3; do
  scenario "SIGINT after $k more runs, mid-run"
  before=$(rows)
  echo 0.3 > "$T/napfor.s"
  opt=--resume
  "$PREREG" run int.lua --data "$D" $opt >/dev/null 2>int.err &
  pid=$!
  for ((i = 0; i < 2400; i++)); do
    [ "$(rows)" -lt $((before + k)) ] && kill -0 $pid 2>/dev/null || break
    sleep 0.05
  done
  echo 300 > "$T/napfor.s"
  for ((i = 0; i < 2400; i++)); do
    pgrep -f -- "$T/nap 300" >/dev/null || ! kill -0 $pid 2>/dev/null && break
    sleep 0.05
  done
  check "SIGINT: sent while a run's command runs" pgrep -f -- "$T/nap 300"
  kill -INT $pid
  t0=$(date +%s.%N)
  wait $pid; rc=$?
  dt=$(since "$t0")
  check "SIGINT: exit 1 (rc=$rc)" [ $rc -eq 1 ]
  check "SIGINT: says interrupted and how to go on" grep -q "interrupted.*--resume" int.err
  check "SIGINT: stops without waiting for the 300 s command (${dt}s)" below "$dt" 100
  check "SIGINT: no command left" gone_within "$T/nap" 30
  after=$(cat "$D"/si/batches/b*.csv 2>/dev/null | grep -c ',nap,')
  check "SIGINT: finished rows kept ($before -> $after)" [ "$after" -gt "$before" ]
  check "SIGINT: batch frozen" [ -z "$(find "$D/si/batches" -name 'b*.csv' -perm -u+w)" ]
  check "SIGINT: nothing doubled" env ALLOW_MISSING=1 bash -c "$(declare -f plan_check); plan_check '$D/si' nap:6:wall_s"
  check "SIGINT: verify passes" "$PREREG" verify int.lua --data "$D" >/dev/null 2>&1
done
echo 0.3 > "$T/napfor.s"
"$PREREG" run int.lua --data "$D" --resume >/dev/null 2>&1
check "after SIGINTs: resume completes the plan" plan_check "$D/si" nap:6:wall_s

# --- commands that misbehave --------------------------------------------
# runs = 1 each: what matters is that each run ends and is recorded. The
# bounds are far above what any machine takes, and far below what the
# failure they guard would take (a daemon's 300 s, a command that never
# ends): the run ends by its own rule, not by how fast the machine is.
run_one() { # run_one NAME LUA-FIELDS EXPECT-VALID MAX-SECONDS
  local name=$1 fields=$2 valid=$3 max=$4 rc t0 dt
  scenario "command that $name"
  sheet "$name.lua" "$name" "{ name = \"w\", runs = 1, $fields }"
  "$PREREG" register "$name.lua" --data "$D" >/dev/null
  t0=$(date +%s.%N)
  timeout -s KILL $((max + 60)) "$PREREG" run "$name.lua" --data "$D" >run.out 2>run.err; rc=$?
  dt=$(since "$t0")
  check "$name: the run ends (rc=$rc, ${dt}s)" [ $rc -le 1 ]
  check "$name: within ${max}s" below "$dt" "$max"
  check "$name: no process left" gone_within "$T/nap" 30
  check "$name: every run recorded once" plan_check "$D/$name" w:1:wall_s
  check "$name: valid is $valid" python3 -c "
import csv, glob, sys
rows = [r for f in glob.glob('$D/$name/batches/b*.csv') for r in csv.DictReader(open(f))]
bad = [(r['arm'], r['valid'], r['reason']) for r in rows if r['valid'] != '$valid']
bad and print(*bad, sep='\n', file=sys.stderr); sys.exit(1 if bad else 0)"
  check "$name: verify passes" "$PREREG" verify "$name.lua" --data "$D" >/dev/null 2>&1
}
run_one daemonizes "cmd = \"$T/daemon.sh\", timeout_s = 150" 1 120
# (Their warm-ups must pass inside the timeout: 3 s leaves a loaded
# machine's shell time to touch a file.)
run_one ignores-sigterm "warmup = 1, cmd = \"$T/second.sh st $T/stubborn.sh\", timeout_s = 3" 0 120
run_one prints-gigabytes "cmd = \"head -c 3000000000 /dev/zero\", timeout_s = 500" 1 480
check "prints-gigabytes: kept output bounded" \
  [ "$(du -sk "$D/prints-gigabytes/batches" | cut -f1)" -lt 8192 ]
check "prints-gigabytes: truncation noted" \
  grep -rqs "truncated" "$D/prints-gigabytes/batches"
run_one prints-forever "warmup = 1, cmd = \"$T/second.sh pf yes gigabytes\", timeout_s = 3" 0 120
run_one closes-stdout "cmd = \"$T/closer.sh\"" 1 120
check "closes-stdout: waited for the command (wall_s >= 0.1)" python3 -c "
import csv, glob
rows = [r for f in glob.glob('$D/closes-stdout/batches/b*.csv') for r in csv.DictReader(open(f))]
assert rows and all(float(r['value']) >= 0.1 for r in rows), rows"

# --- prereg itself killed -9 while a command's daemons are out of reach --
# One daemon left the group with setsid while its parent still runs; one
# was orphaned at once (double fork): neither is in the group the helper
# kills, and neither may outlive the run.
cat > "$T/escape.sh" <<SH
#!/bin/sh
setsid "$T/nap" 303 </dev/null >/dev/null 2>&1 &
( setsid "$T/nap" 304 </dev/null >/dev/null 2>&1 & )
"$T/nap" 30
SH
chmod +x "$T/escape.sh"
scenario "kill -9 of prereg while daemons that left the group run"
sheet escape.lua escape "{ name = \"w\", runs = 1, cmd = \"$T/escape.sh\", timeout_s = 60 }"
"$PREREG" register escape.lua --data "$D" >/dev/null
"$PREREG" run escape.lua --data "$D" >/dev/null 2>&1 &
pid=$!
for ((i = 0; i < 2400; i++)); do
  [ "$(pgrep -fc -- "$T/nap 30[34]")" = 2 ] && break; sleep 0.05
done
check "escape: both daemons started" [ "$(pgrep -fc -- "$T/nap 30[34]")" = 2 ]
kill -9 $pid
wait $pid 2>/dev/null
check "escape: no process of the run left after kill -9" gone_within "$T/nap" 30
pkill -9 -f -- "$T/nap" 2>/dev/null
check "escape: verify passes after the kill" "$PREREG" verify escape.lua --data "$D"

# prereg's own stdout closed, or a pipe whose reader went away.
scenario "prereg with its stdout closed"
"$PREREG" run closes-stdout.lua --data "$D" --resume >&- 2>own.err; rc=$?
check "own stdout closed: no crash (rc=$rc)" [ $rc -le 1 ]
scenario "prereg writing into a closed pipe"
"$PREREG" analyze int.lua --data "$D" | head -c 1 >/dev/null; rc=${PIPESTATUS[0]}
check "closed pipe: no crash (rc=$rc)" [ $rc -le 1 ] || [ $rc -eq 141 ]
report_scenarios
done_testing 66
