#!/usr/bin/env bash
# kill9.sh: `prereg run` killed with SIGKILL at 24 random moments (from
# start-up and recovery to the middle of a run and the freeze), each time
# followed by `run --resume`: no run lost or doubled against the plan,
# `verify` passes after every kill, nothing of the run left behind.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/lib.sh"
KILLS=${KILLS:-24}

ln -s "$(command -v sleep)" "$T/nap"   # a command line that names $T
sheet s.lua k \
  "{ name = \"nap\", runs = 100, cmd = \"$T/nap 0.04\", metrics = { \"wall_s\", \"user_s\" } }" \
  "{ name = \"two\", runs = 4, steps = { \"$T/nap 0.01\", \"true\" } }"
PLAN=(nap:100:wall_s,user_s two:4:wall_s)
D=$T/data
"$PREREG" register s.lua --data "$D" >/dev/null || bad "register"

# The plan (100 rounds x 3 arms x 0.04 s of sleep alone) outlasts the kills
# (7 s expected, 22 s at most), so most land mid-run on a fast machine too.
# Moments: a third early (start-up, lock, recovery), the rest anywhere.
killed=0 completed=0
for ((i = 1; i <= KILLS; i++)); do
  if ((i % 3 == 0)); then ms=$((RANDOM % 60)); else ms=$((RANDOM % 900)); fi
  delay=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))
  # After a few rounds the plan may be complete: then --resume is a no-op.
  opt=--resume; [ $i -eq 1 ] && opt=
  "$PREREG" run s.lua --data "$D" $opt >/dev/null 2>"err$i.txt" &
  pid=$!
  sleep "$delay"
  if kill -9 $pid 2>/dev/null; then killed=$((killed + 1)); else completed=$((completed + 1)); fi
  wait $pid 2>/dev/null
  scenario "kill -9 after ${delay}s"
  check "kill $i: no run doubled" env ALLOW_MISSING=1 bash -c "$(declare -f plan_check); plan_check '$D/k' ${PLAN[*]}"
  if "$PREREG" verify s.lua --data "$D" >"verify$i.txt" 2>&1; then ok; else
    bad "kill $i: verify fails:"; grep -v '^ok\|^note' "verify$i.txt" | head -3 >&2; fi
  check "kill $i: no command left" gone_within "$T/nap"
done
echo "killed $killed runs mid-way; $completed had already finished"
check "most kills landed mid-run" [ $killed -ge $((KILLS / 2)) ]

# Complete the plan; every run exactly once, everything verifies.
"$PREREG" run s.lua --data "$D" --resume >/dev/null 2>final.txt
check "final resume exit 0" [ $? -eq 0 ] || cat final.txt >&2
check "plan complete: no run lost or doubled" plan_check "$D/k" "${PLAN[@]}"
if "$PREREG" verify s.lua --data "$D" >verify.txt 2>&1; then ok; else
  bad "verify after all:"; grep -v '^ok\|^note' verify.txt | head -5 >&2; fi
check "every batch frozen" [ -z "$(find "$D/k/batches" -name 'b*.csv' -perm -u+w)" ]
check "analyze reads it" "$PREREG" analyze s.lua --data "$D" >/dev/null

# --- kill -9 at every commit point, deterministically --------------------
# Random moments rarely hit the freeze. strace kills prereg (only its own
# process: no -f) with SIGKILL at the N-th call of each syscall that makes
# data durable or read-only, for every N a whole run makes.
if command -v strace >/dev/null; then
  sheet p.lua p "{ name = \"w\", runs = 2, cmd = \"true\" }"
  "$PREREG" register p.lua --data "$T/count" >/dev/null
  strace -qq -o count.txt -e trace=fsync,rename,chmod,fchmod,unlink "$PREREG" run p.lua --data "$T/count" >/dev/null 2>&1
  for sc in fsync rename chmod fchmod unlink; do
    calls=$(grep -c "^$sc(" count.txt)
    for ((k = 1; k <= calls; k++)); do
      scenario "kill -9 at $sc call $k of $calls"
      P=$T/p-$sc-$k
      "$PREREG" register p.lua --data "$P" >/dev/null
      # (in a subshell: bash's "Killed" notice is expected, not news)
      ( strace -qq -o /dev/null -e trace=$sc -e inject=$sc:signal=SIGKILL:when=$k \
        "$PREREG" run p.lua --data "$P" >/dev/null 2>&1 ) 2>/dev/null
      if "$PREREG" verify p.lua --data "$P" >v.txt 2>&1; then ok; else
        bad "kill at $sc $k: verify fails:"; grep -v '^ok\|^note' v.txt | head -3 >&2; fi
      "$PREREG" run p.lua --data "$P" --resume >/dev/null 2>r.txt
      check "kill at $sc $k: resume exit 0" [ $? -eq 0 ] || head -3 r.txt >&2
      check "kill at $sc $k: no run lost or doubled" plan_check "$P/p" w:2:wall_s
      if "$PREREG" verify p.lua --data "$P" >v.txt 2>&1; then ok; else
        bad "kill at $sc $k: verify after resume fails:"; grep -v '^ok\|^note' v.txt | head -3 >&2; fi
    done
  done
else
  bad "strace is missing (sh scripts/deps.sh test): commit points not tested"
fi
report_scenarios
done_testing $((KILLS * 3 + 6 + 4 * 20))
