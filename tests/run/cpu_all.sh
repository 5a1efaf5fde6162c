#!/usr/bin/env bash
# cpu_all.sh: user_s and sys_s count every process of a run, waited for
# by the command or not. The same CPU-bound loop (a known amount of work,
# dash counting to 300000) run bare, by a shell that leaves it behind as
# an orphan and does not wait for it, and under bubblewrap with its own
# PID namespace (whose outer process does not wait for the sandbox's
# first process): each median user_s is within 2x of the bare one's. CPU
# time, not wall time, and a generous bound: load does not decide it.
# The same without prereg-exec beside prereg.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
T=$(mktemp -d /tmp/prereg-cpu.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
BWRAP="bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid"
if ! $BWRAP true 2>"$T/bwrap.err"; then
  bad "bubblewrap cannot run here ($(head -c 200 "$T/bwrap.err")): scripts/deps.sh demo, and user namespaces allowed"
  done_testing 1
fi
echo 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done' >busy.sh
mkfifo f
# The loop's shell is left to us: the command reads its end from the
# fifo, then exits without waiting for it.
echo "(dash $T/busy.sh; echo x >$T/f) & read x <$T/f" >orphan.sh
cat >c.lua <<LUA
protocol {
  id = "c", title = "cpu", question = "Is every process's CPU counted?", author = "t",
  arms = { { name = "bare", reference = true, run = "dash $T/busy.sh" },
           { name = "orphan", run = "dash $T/orphan.sh" },
           { name = "bwrap", run = "$BWRAP dash $T/busy.sh" } },
  workloads = { { name = "loop", runs = 5, metrics = { "user_s", "sys_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 7,
           verdicts = { { "tie", ci_within = { 0.5, 2 } } } },
}
LUA
# Through prereg-exec, and without it (a copy of prereg alone: the spawn
# helper then counts its children's CPU itself).
mkdir alone
cp "$PREREG" alone/prereg
for how in stub alone; do
  P=$PREREG
  [ "$how" = alone ] && P=$T/alone/prereg
  "$P" register c.lua --data "d$how" >/dev/null || bad "register"
  expect 0 "run ($how)" "$P" run c.lua --data "d$how"
  for arm in orphan bwrap; do
    check "$how, $arm: median user_s within 2x of bare's, none invalid" \
      python3 - "d$how" "$arm" <<'PY'
import csv, glob, statistics, sys
d, arm = sys.argv[1], sys.argv[2]
rows = [r for f in glob.glob(d + "/c/batches/*.csv") for r in csv.DictReader(open(f))
        if r["metric"] == "user_s"]
def med(a):
    v = [float(r["value"]) for r in rows if r["arm"] == a and r["valid"] == "1"]
    assert len(v) == 5, (a, v)
    return statistics.median(v)
a, b = med(arm), med("bare")
print("%s: user_s %.4f s, bare %.4f s, ratio %.2f" % (arm, a, b, a / b), file=sys.stderr)
assert b > 0 and 0.5 <= a / b <= 2, (a, b)
PY
  done
done
check "nothing of the runs is left" sh -c "! pgrep -f 'dash $T/[b]usy.sh' >/dev/null"
done_testing 7
