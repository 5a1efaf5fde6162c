#!/bin/sh
# stop.sh DIR: stops what start.sh DIR started, by the PIDs it recorded
# (checked against their start times, so a reused PID is left alone): this
# cluster's jobs are cancelled, step daemons that outlive that are killed with
# their tasks, then slurmd, slurmctld and munged get SIGTERM, SIGKILL after
# 10 s. Exits 1 and names the PIDs if any would not die; 0 otherwise (also
# when nothing ran).
# SPDX-License-Identifier: MIT
set -u
prog=stop.sh
. "$(dirname "$0")/lib.sh"

if [ $# -ne 1 ]; then
  echo "usage: scripts/slurm/stop.sh DIR" >&2
  exit 2
fi
cluster_dir "$1"
[ -d "$PIDS" ] || exit 0
left=""

# Cancelled jobs let their steps end as Slurm ends them (SIGTERM, SIGKILL
# after KillWait), so nothing a step started outlives it unseen.
if recorded slurmctld > /dev/null && recorded munged > /dev/null; then
  jobs=$(SLURM_CONF=$CONF timeout 10 squeue -h -o %A 2> /dev/null)
  if [ -n "$jobs" ]; then
    SLURM_CONF=$CONF timeout 10 scancel $jobs 2> /dev/null
    i=0
    while [ -n "$(SLURM_CONF=$CONF timeout 10 squeue -h -o %A 2> /dev/null)" ] && [ $i -lt 100 ]; do
      i=$((i + 1))
      sleep 0.1
    done
  fi
fi
# Step daemons still running (no controller to cancel through, or a step
# that outlived the wait): killed with every process under them.
steps=$(stepds "")
if [ -n "$steps" ] && ! wait_gone 10 "$steps" > /dev/null; then
  steps=$(stepds "")
  echo "$prog: killing step daemons that outlived their jobs:" $(echo "$steps" | cut -d' ' -f1) >&2
  s=$(crash "$steps") || left="$left $s"
fi

# stop NAME...: SIGTERM to each recorded process; those still there after
# 10 s are killed with whatever they forked (slurmctld's slurmscriptd).
stop() {
  local name procs="" p s
  for name in "$@"; do
    p=$(recorded "$name") && procs="$procs
$p $(cut -d' ' -f2 "$PIDS/$name")"
  done
  [ -n "$procs" ] || return 0
  signal TERM "$procs"
  wait_gone 10 "$procs" > /dev/null && return 0
  echo "$prog: no end 10 s after SIGTERM, SIGKILL:" $(wait_gone 0 "$procs") >&2
  s=$(crash "$procs") || left="$left $s"
}
nodes=$(for f in "$PIDS"/slurmd-*; do [ -f "$f" ] && echo "${f##*/}"; done)
stop $nodes
stop slurmctld
stop munged

if [ -n "$left" ]; then
  echo "$prog: still running after SIGKILL:$left" >&2
  exit 1
fi
rm -f "$PIDS"/*
exit 0
