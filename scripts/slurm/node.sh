#!/bin/sh
# node.sh DIR NODE stop|start: the loss of one node of the cluster start.sh
# DIR runs, and its return, for fault tests.
#   stop   SIGKILL, as a power cut would, the node's slurmd (by its recorded
#          PID), its step daemons and every process under them; no goodbye
#          reaches slurmctld, which marks the node down after SlurmdTimeout.
#   start  a new slurmd for NODE; waits (up to 30 s) until it has
#          registered with slurmctld and the node responds again.
# SPDX-License-Identifier: MIT
set -u
prog=node.sh
. "$(dirname "$0")/lib.sh"

if [ $# -ne 3 ]; then
  echo "usage: scripts/slurm/node.sh DIR NODE stop|start" >&2
  exit 2
fi
cluster_dir "$1"
node=$2
[ -f "$CONF" ] && grep -q "^NodeName=$node " "$CONF" || die "$node: no such node in $CONF"
[ -d "$PIDS" ] || die "no cluster in $D"

# slurmd_start: when slurmctld last heard a slurmd of the node start.
slurmd_start() {
  SLURM_CONF=$CONF timeout 5 scontrol show node "$node" 2> /dev/null |
    sed -n 's/.*SlurmdStartTime=\([^ ]*\).*/\1/p'
}

case "$3" in
  stop)
    procs=$(stepds "$node")
    p=$(recorded "slurmd-$node") && procs="$p $(cut -d' ' -f2 "$PIDS/slurmd-$node")
$procs"
    [ -n "$procs" ] || die "nothing of $node runs"
    s=$(crash "$procs") || die "still running after SIGKILL: $s"
    rm -f "$PIDS/slurmd-$node"
    ;;
  start)
    recorded slurmctld > /dev/null || die "slurmctld of $D does not run"
    p=$(recorded "slurmd-$node") && die "slurmd of $node runs already (pid $p)"
    # Back means registered anew: slurmctld shows a new SlurmdStartTime
    # (whole seconds: a start in the second of the last one is held back a
    # little so the two differ) and the node responds.
    old=$(slurmd_start)
    while [ "$(date +%Y-%m-%dT%H:%M:%S)" = "$old" ]; do sleep 0.1; done
    launch "slurmd-$node" slurmd -D -N "$node" -f "$CONF" || exit 1
    i=0
    while :; do
      recorded "slurmd-$node" > /dev/null ||
        die "slurmd of $node ended: $(tail -n 15 "$D/log/slurmd-$node.out")"
      new=$(slurmd_start)
      st=$(SLURM_CONF=$CONF timeout 5 sinfo -h -N -n "$node" -o %t 2> /dev/null)
      if [ -n "$new" ] && [ "$new" != "$old" ]; then
        case "$st" in
          '' | *'*' | down* | unk*) ;;
          *) break ;;
        esac
      fi
      i=$((i + 1))
      [ $i -lt 300 ] || die "$node still '$st' 30 s after its slurmd started"
      sleep 0.1
    done
    ;;
  *)
    echo "usage: scripts/slurm/node.sh DIR NODE stop|start" >&2
    exit 2
    ;;
esac
