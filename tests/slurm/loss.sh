#!/usr/bin/env bash
# loss.sh: a node's daemons killed in the middle of a round (as a machine
# that loses power: scripts/slurm/node.sh stop), then the coordinator
# itself killed with -9. The other hosts' rounds are kept, the lost round
# counts for nothing (named in the facts) and its host's rounds left are
# not moved; --resume refuses while the node is down and completes exactly
# the plan once it is back. Fails, never skips, when the cluster cannot
# start. About a minute, most of it slurmctld noticing the loss.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.sh"
H=$(cd "$(dirname "$0")" && pwd)
cluster_up
export PREREG_SLURM_WAIT_S=30
cd "$T"
cp "$H/sheets/nap.lua" .
D="--data $T/data"
B=$T/data/nap-hosts/batches
expect 0 "register" "$PREREG" register nap.lua $D

# tally FILE...: "HOST ARM ROUND VALID REASON-START" per row of the batches.
tally() {
  python3 - "$@" << 'PY'
import csv, sys
for f in sys.argv[1:]:
    for r in csv.DictReader(open(f)):
        print(r["host"], r["arm"], r["round"], r["valid"], (r["reason"] or "-").split(":")[0].replace(" ", "_"))
PY
}
# mid_round: n2 has ended a round and started the next (its step said
# hello), whose end has not come. A round sends its rows when it ends, so
# a round lost in the middle leaves none.
mid_round() {
  [ -f "$B/b0001/n2.lines" ] && grep -q '^end ' "$B/b0001/n2.lines" &&
    tail -n 1 "$B/b0001/n2.lines" | grep -q '^prereg-node 1 n2 '
}

# 1. n2 lost in the middle of a round.
"$PREREG" run nap.lua $D > run1.out 2> run1.err &
run=$!
check "n2 is in the middle of its second round or later" until_true 60 mid_round
"$S/node.sh" "$T/cluster" n2 stop > node.out 2>&1
check "node.sh stops n2: $(cat node.out)" test $? -eq 0
t0=$SECONDS
wait $run
rc=$?
# The round lost: the one after the last n2 ended, read once the run is
# over (on a slow machine n2 may end another round before the stop).
k=$(($(grep -c '^end ' "$B/b0001/n2.lines") + 1))
check "n2 was lost in its second round or later (round $k)" test "$k" -ge 2 -a "$k" -le 5
check "the run ends with exit 1 once n2 is lost: $(tail -n 3 run1.err)" test "$rc" -eq 1
echo "lost in round $k; the run ended $((SECONDS - t0)) s after the kill"
check_grep "it names n2 and the round" "n2 was lost during round $k of nap" "$(cat run1.err)"
check_grep "and says to resume" "run --resume when the node is back" "$(cat run1.err)"
tally "$B/b0001.csv" > t1
check "n1 and n3 completed every round, all valid" \
  test "$(grep -cE '^n[13] [a-z]+ [1-5] 1 -$' t1)" -eq 20
check "n2's rounds before the loss are kept, valid" \
  test "$(grep -cE '^n2 [a-z]+ [0-9]+ 1 -$' t1)" -eq $(((k - 1) * 2))
check "nothing of n2's lost round, nor of its later rounds, nor moved to another host" \
  test "$(awk -v k="$k" '$1 == "n2" && $3 >= k' t1 | wc -l)" -eq 0 -a "$(wc -l < t1)" -eq $((20 + (k - 1) * 2))
python3 - "$B/b0001.json" "$k" > facts.check << 'PY'
import json, sys
f = json.load(open(sys.argv[1])); k = int(sys.argv[2])
n2 = f["nodes"]["n2"]
ok = n2["rounds_done"] == k - 1 and n2["rounds_lost"] == 6 - k and \
    f["nodes"]["n1"]["rounds_lost"] == 0 and any(("n2 was lost during round %d of nap" % k) in x for x in f["lost_rounds"])
print("ok" if ok else "bad %s %s" % (n2["rounds_done"], n2["rounds_lost"]))
PY
check "the facts count n2's rounds done and lost: $(cat facts.check)" grep -qx ok facts.check
expect 0 "verify after the loss" "$PREREG" verify nap.lua $D

# What counts: n2 completed too few of its rounds, so too few hosts count.
expect 0 "analyze after the loss" "$PREREG" analyze nap.lua --json $D
printf '%s\n' "$out" > lost.json
python3 - lost.json "$k" > lost.check << 'PY'
import json, sys
a = json.load(open(sys.argv[1])); k = int(sys.argv[2])
h = {x["host"]: x for x in a["across"]["hosts"]}
x = [r for r in a["results"] if r["host"] is None][0]
ok = h["n2"]["rounds_completed"] == k - 1 and not h["n2"]["counted"] and \
    h["n1"]["counted"] and h["n3"]["counted"] and \
    x["hosts_counted"] == 2 and x["verdict"] == "too few hosts" and x["ci_low"] is None
print("ok" if ok else "bad %s %s %s" % (h["n2"], x["verdict"], x["hosts_counted"]))
PY
check "n2 does not count, the estimate needs 3 hosts: $(cat lost.check)" \
  grep -qx ok lost.check

# 2. --resume while n2 is down: refused, nothing written.
PREREG_SLURM_WAIT_S=3 expect 1 "--resume while n2 is down" "$PREREG" run nap.lua --resume $D
check_grep "salloc cannot have n2" "salloc could not allocate the nodes n2" "$out"
check "no batch was begun" test ! -e "$B/b0002.csv"

# 3. n2 back: --resume runs its rounds left there, a new allocation.
expect 0 "node.sh starts n2 again" "$S/node.sh" "$T/cluster" n2 start
expect 0 "--resume with n2 back" "$PREREG" run nap.lua --resume $D
check_grep "it ran n2's rounds left" "batch b0002: $(((6 - k) * 2)) runs, $(((6 - k) * 2)) valid" "$out"
tally "$B/b0002.csv" > t2
check "only n2 ran in the resumed batch" test -z "$(awk '$1 != "n2"' t2)"
cat t1 t2 | awk '$4 == 1' | sort | uniq -c | awk '{ print $1 }' | sort -u > counts
check "now every (host, arm, round) has exactly one valid run" \
  test "$(cat counts)" = 1 -a "$(cat t1 t2 | awk '$4 == 1' | wc -l)" -eq 30
expect 0 "verify after resume" "$PREREG" verify nap.lua $D
expect 0 "analyze after resume" "$PREREG" analyze nap.lua --json $D
check_grep "now all three hosts count" '"hosts_counted": 3' "$out"

# 4. The coordinator killed with -9 mid-batch: --resume gives exactly the plan.
sed 's/id = "nap-hosts"/id = "nap-kill9"/' nap.lua > kill9.lua
expect 0 "register the second experiment" "$PREREG" register kill9.lua $D
K=$T/data/nap-kill9/batches
"$PREREG" run kill9.lua $D > run2.out 2> run2.err &
run=$!
some_rows() { [ -f "$K/b0001.csv" ] && [ "$(wc -l < "$K/b0001.csv")" -ge 7 ]; }
check "rows arrive" until_true 60 some_rows
kill -9 $run
wait $run 2> /dev/null
runners() { pgrep -f "node-run $K" > /dev/null || pgrep -f "node-run $T/data/nap-kill9" > /dev/null; }
check "its sruns and node runners end with it" until_true 60 eval '! runners'
check "its allocation outlives it" test -n "$(squeue -h -n "$(squeue -h -o %j | grep '^prereg-nap-kill9' | head -n 1)")"
expect 0 "--resume after kill -9 (the old allocation is cancelled, a new one made)" \
  "$PREREG" run kill9.lua --resume $D
check_grep "the unfinished batch is recovered" "recovered" "$out"
tally "$K"/b*.csv > t3
check "exactly the plan: 30 runs, each (host, arm, round) once, all valid" \
  test "$(sort t3 | uniq | wc -l)" -eq 30 -a "$(wc -l < t3)" -eq 30 -a "$(awk '$4 != 1' t3 | wc -l)" -eq 0
expect 0 "verify after kill -9 and resume" "$PREREG" verify kill9.lua $D
check "no job of ours is left" test -z "$(squeue -h)"

done_testing 35
