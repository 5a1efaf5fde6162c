#!/usr/bin/env bash
# smoke.sh: a real Slurm cluster on loopback from scripts/slurm (n1..n3),
# with a second one beside it that it must not see; steps on every node of one
# allocation; the loss of a node under a running step, its return, and what
# srun and slurmctld make of both (tests/slurm/NOTES.md); at the end nothing
# the scripts started is left. Root only; fails, never skips, when no cluster
# starts. About 45 s, most of it waiting for slurmctld to mark a node down.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
S=$(cd "$(dirname "$0")/../../scripts/slurm" && pwd)

# A caller inside a Slurm job would lend srun its job: none of that here.
for v in $(env | sed -n 's/^\(SLURM[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
T=$(mktemp -d /tmp/prereg-slurm-XXXXXX)
chmod a+x "$T" # munged needs every folder above its socket searchable
SRUNS=()
cleanup() {
  local p
  for p in "${SRUNS[@]}"; do kill -KILL "$p" 2> /dev/null; done
  "$S/stop.sh" "$T/b" > /dev/null 2>&1
  "$S/stop.sh" "$T/a" > /dev/null 2>&1
  [ -n "${KEEP:-}" ] || rm -rf "$T"
}
on_exit cleanup
t0=$EPOCHREALTIME
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# until_true SECONDS CMD...: runs CMD every 0.2 s until it succeeds.
until_true() {
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -lt "$end" ] || return 1
    sleep 0.2
  done
}
# rows NODE JOB COUNT NAME [SRUN OPTION...]: in the background, a step on NODE
# printing COUNT rows 0.25 s apart; stdout, stderr and status to $T/NAME.*
rows() {
  local node=$1 job=$2 count=$3 name=$4
  shift 4
  (
    srun --jobid="$job" -w "$node" -N1 -n1 "$@" sh -c \
      "i=0; while [ \$i -lt $count ]; do i=\$((i + 1)); echo row \$i; sleep 0.25; done" \
      > "$T/$name.out" 2> "$T/$name.err" &
    echo $! > "$T/$name.pid"
    wait $!
    echo $? > "$T/$name.rc"
  ) &
  until_true 30 test -s "$T/$name.pid"
  SRUNS+=("$(cat "$T/$name.pid")")
}
count() { wc -l < "$T/$1.out"; }
has_rows() { [ "$(count "$1")" -ge "$2" ]; }
node_is() { [ "$(state "$1")" = "$2" ]; }
# holders PATTERN: the processes holding a file that matches PATTERN open.
holders() {
  find /proc/[0-9]*/fd -maxdepth 1 -lname "$1" 2> /dev/null | cut -d/ -f3 | sort -u
}
state() { sinfo -h -N -n "$1" -o %t; }
allocate() { # salloc ARGS...: prints the job ID of the allocation granted
  salloc --no-shell "$@" 2>&1 | sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p'
}
# still_running: of the "PID START" lines read, prints each PID whose process
# (that start time, no zombie) still runs.
still_running() {
  local p t s
  while read -r p t; do
    s=$(sed 's/^.*) //' "/proc/$p/stat" 2> /dev/null) || continue
    set -- $s
    [ "$1" != Z ] && [ "${20}" = "$t" ] && echo "$p"
  done
}

# 1. Two clusters side by side: each sees its own nodes and jobs only.
env_a=$("$S/start.sh" "$T/a" 2> "$T/start-a.err")
check "start.sh starts a 3-node cluster: $(tail -n 30 "$T/start-a.err")" test -n "$env_a"
env_b=$("$S/start.sh" "$T/b" 2 2> "$T/start-b.err")
check "start.sh starts a second cluster beside it: $(tail -n 30 "$T/start-b.err")" test -n "$env_b"
[ -n "$env_a" ] && [ -n "$env_b" ] || done_testing
echo "started two clusters in $(since "$t0") s"
eval "$env_b"
conf_b=$SLURM_CONF
sock_b=$PREREG_MUNGE_SOCKET
eval "$env_a"
check_grep "SLURM_CONF under the cluster's folder" "^$T/a/" "$SLURM_CONF"
check_grep "sinfo shows n1..n3 idle" '^n1 idle n2 idle n3 idle $' \
  "$(sinfo -h -N -o '%N %t' | tr '\n' ' ')"
check_grep "the other cluster's sinfo shows its own n1, n2" '^n1 idle n2 idle $' \
  "$(SLURM_CONF=$conf_b sinfo -h -N -o '%N %t' | tr '\n' ' ')"
J=$(allocate -N3 --exclusive --no-kill)
check "salloc --no-shell -N3 --exclusive --no-kill grants an allocation" test -n "$J"
check "the other cluster does not see job $J" \
  test -z "$(SLURM_CONF=$conf_b squeue -h -o %i)"
check "the other munged refuses this one's credentials" \
  sh -c "! munge -n -S '$PREREG_MUNGE_SOCKET' | unmunge -S '$sock_b' > /dev/null 2>&1"
port=$(sed -n 's/^SlurmctldPort=//p' "$SLURM_CONF")
check_grep "slurmctld listens on 127.0.0.1 only" '^0100007F$' "$(awk -v p="$(printf '%04X' "$port")" \
  'FNR > 1 && $4 == "0A" { split($2, a, ":"); if (a[2] == p) print a[1] }' /proc/net/tcp /proc/net/tcp6)"
recorded_b=$(cat "$T/b/pid/"*)
expect 0 "stop.sh stops the second cluster" "$S/stop.sh" "$T/b"
check "nothing of the second cluster runs" test -z "$(still_running <<< "$recorded_b")"

# 2. A step on each node of the allocation.
for n in n1 n2 n3; do
  check_grep "a step of job $J on $n runs there" "^$n $J\$" \
    "$(srun --jobid="$J" -w "$n" -N1 -n1 sh -c 'echo $SLURMD_NODENAME $SLURM_JOB_ID' 2>&1)"
done

# 3. n2 lost mid-step: srun ends only when slurmctld marks n2 down, with
#    status 0 and a line on stderr; the rows written before the loss came
#    back, the steps on n1 and n3 complete, the allocation (--no-kill) lives on
#    without n2.
rows n1 "$J" 40 n1
rows n2 "$J" 400 n2
rows n3 "$J" 40 n3
until_true 60 has_rows n2 4
check "the step on n2 streams rows while it runs" test "$(count n2)" -ge 4
check "n2's slurmd and step daemon hold its log" test "$(holders "$T/a/log/slurmd-n2.log" | wc -l)" -ge 2
tk=$EPOCHREALTIME
expect 0 "node.sh stops n2" "$S/node.sh" "$T/a" n2 stop
at_kill=$(count n2)
check "after node.sh stop, no process holds n2's log" test -z "$(holders "$T/a/log/slurmd-n2.log")"
until_true 60 node_is n2 'down*'
down=$(since "$tk")
check_grep "slurmctld marks n2 down within 60 s (after $down s)" '^down\*$' "$(state n2)"
until_true 30 test -s "$T/n2.rc"
echo "n2 lost: marked down after $down s, srun ended after $(since "$tk") s"
check_grep "srun of the lost step exits 0 (its status says nothing)" '^0$' "$(cat "$T/n2.rc")"
check_grep "srun says 'Node failure on n2' on stderr" 'srun: error: Node failure on n2' \
  "$(cat "$T/n2.err")"
check "no row of n2 after the loss (at most one in flight)" \
  test "$(count n2)" -le $((at_kill + 1))
until_true 30 test -s "$T/n1.rc" -a -s "$T/n3.rc"
for n in n1 n3; do
  check_grep "the step on $n completes: status 0" '^0$' "$(cat "$T/$n.rc")"
  check_grep "the step on $n completes: all 40 rows" '^40$' "$(count $n)"
done
check_grep "job $J (--no-kill) runs on without n2" '^RUNNING n\[1,3\]$' \
  "$(squeue -h -j "$J" -o '%T %N')"

# 4. n2 back: in service again, but no longer part of job $J; a new
#    allocation takes it.
expect 0 "node.sh starts n2 again" "$S/node.sh" "$T/a" n2 start
check_grep "n2 idle again (ReturnToService=2)" '^idle$' "$(state n2)"
expect 1 "job $J gets no step on n2" srun --jobid="$J" -w n2 -N1 -n1 true
check_grep "srun says why" 'Requested node configuration is not available' "$out"
K=$(allocate -N1 -w n2 --exclusive --no-kill)
check "a new allocation on n2" test -n "$K"
check_grep "a step of job $K runs on n2" '^n2$' \
  "$(srun --jobid="$K" -w n2 -N1 -n1 sh -c 'echo $SLURMD_NODENAME' 2>&1)"

# 5. n2 lost and back before slurmctld noticed: nothing tells srun, which
#    waits on; the lost step still holds n2's CPUs (a new step needs
#    --overlap) until cancelled, and srun then ends with status 0.
rows n2 "$K" 400 q2
until_true 60 has_rows q2 2
expect 0 "node.sh stops n2 again" "$S/node.sh" "$T/a" n2 stop
expect 0 "node.sh starts it at once" "$S/node.sh" "$T/a" n2 start
at_kill=$(count q2)
sleep 3
check "srun still waits 3 s after" test ! -e "$T/q2.rc"
check "no row came meanwhile" test "$(count q2)" -le $((at_kill + 1))
lost=$(squeue -h -s -j "$K" -o %i)
check_grep "slurmctld still lists the lost step" "^$K\\.[0-9]+\$" "$lost"
expect 1 "a new step on n2 is refused while the lost one holds it" \
  srun --jobid="$K" -w n2 -N1 -n1 --immediate=5 true
check_grep "srun says why" 'Requested nodes are busy' "$out"
check_grep "srun --overlap runs a step on n2" '^n2$' \
  "$(srun --jobid="$K" -w n2 -N1 -n1 --overlap sh -c 'echo $SLURMD_NODENAME' 2>&1)"
scancel "$lost"
until_true 30 test -s "$T/q2.rc"
check_grep "srun of the cancelled lost step exits 0" '^0$' "$(cat "$T/q2.rc" 2> /dev/null)"
check_grep "srun says the step was aborted" 'Job step aborted' "$(cat "$T/q2.err")"

# 6. Stop: every process recorded is gone, and no process holds a file or a
#    socket under the cluster's folder.
recorded_a=$(cat "$T/a/pid/"*)
expect 0 "stop.sh stops the cluster" "$S/stop.sh" "$T/a"
for p in "${SRUNS[@]}"; do
  check "srun $p of this test ended" test ! -d "/proc/$p" -o "$(sed 's/^.*) //; s/ .*//' "/proc/$p/stat" 2> /dev/null)" = Z
  kill -KILL "$p" 2> /dev/null
done
SRUNS=()
check "nothing recorded still runs: $(still_running <<< "$recorded_a" | tr '\n' ' ')" \
  test -z "$(still_running <<< "$recorded_a")"
check "no process holds a file under $T: $(holders "$T/*" | tr '\n' ' ')" test -z "$(holders "$T/*")"
check "no socket bound under $T is open" test -z "$(grep -F "$T/" /proc/net/unix)"
echo "total $(since "$t0") s"
done_testing 40
