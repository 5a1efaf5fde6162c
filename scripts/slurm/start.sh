#!/bin/sh
# start.sh DIR [NODES]: a private Slurm cluster on this host: its own munged
# (own key and socket), slurmctld and NODES slurmd (n1..nNODES, default 3)
# on 127.0.0.1, each on a loopback port found free; every file under DIR.
# Waits until sinfo shows every node idle; prints the environment a client
# needs as shell (eval "$(scripts/slurm/start.sh DIR)"), also kept in
# DIR/env. On failure it prints the logs' tails, stops what it started and
# exits 1. Stop with scripts/slurm/stop.sh DIR. Root only; Debian 12 packages
# slurmctld slurmd slurm-client munge.
# SPDX-License-Identifier: MIT
set -u
umask 022
prog=start.sh
. "$(dirname "$0")/lib.sh"

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: scripts/slurm/start.sh DIR [NODES]" >&2
  exit 2
fi
N=${2:-3}
case "$N" in
  '' | *[!0-9]*) die "NODES must be a number from 1 to 64, not '$N'" ;;
esac
[ "$N" -ge 1 ] && [ "$N" -le 64 ] || die "NODES must be a number from 1 to 64, not '$N'"
# Time allowed for all nodes to be idle (it takes about 0.3 s).
WAIT=${PREREG_SLURM_WAIT:-30}
[ "$(id -u)" = 0 ] || die "must run as root (slurmd starts each step as its user)"
for c in munged mungekey munge unmunge slurmctld slurmd sinfo setsid timeout; do
  command -v "$c" > /dev/null ||
    die "$c missing: apt-get install --no-install-recommends slurmctld slurmd slurm-client munge"
done
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1" || die "cannot make $1"
cluster_dir "$1"
# The folders below are replaced at each start: DIR must be empty or hold a
# cluster of ours that has stopped.
if [ -d "$PIDS" ]; then
  for f in "$PIDS"/*; do
    [ -f "$f" ] || continue
    p=$(recorded "${f##*/}") && die "a cluster runs in $D (${f##*/} is pid $p): stop.sh $D first"
  done
elif [ -n "$(ls -A "$D")" ]; then
  die "$D is neither empty nor the folder of a cluster start.sh made"
fi

# munged refuses a socket that clients of other users could not reach: every
# folder above it must be searchable by all. DIR is ours to open (mktemp -d
# makes it 0700); a parent that is not, we do not change.
chmod a+x "$D" || die "cannot chmod a+x $D"
p=${D%/*}
while [ -n "$p" ]; do
  [ -n "$(find "$p" -maxdepth 0 -perm -o=x)" ] ||
    die "$p is not searchable by all (munged needs that above its socket): use a DIR under /tmp"
  p=${p%/*}
done

# ports_free PORT...: no TCP socket of this network namespace (any state, any
# address, IPv4 or IPv6) holds any of the ports. What ss -tan shows, read from
# /proc so that iproute2 is not needed.
ports_free() {
  local tables="" t
  for t in /proc/net/tcp /proc/net/tcp6; do [ -r "$t" ] && tables="$tables $t"; done
  [ -n "$tables" ] || die "no /proc/net/tcp: cannot tell which ports are free"
  printf '%04X\n' "$@" | awk '
    FNR == NR { want[$1] = 1; next }
    FNR > 1 { n = split($2, a, ":"); if (a[n] in want) taken = 1 }
    END { exit taken }' - $tables
}

# pick_ports: sets PORT (slurmctld; slurmd nX listens on PORT+X) to a random
# base from 10000 up to the kernel's ephemeral range (where outgoing
# connections take their ports), with all N+1 ports free.
pick_ports() {
  local low tries=0 r
  read -r low _ < /proc/sys/net/ipv4/ip_local_port_range || low=32768
  [ "$low" -gt $((10000 + 1000 + N)) ] || low=65535
  while [ $tries -lt 100 ]; do
    r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
    PORT=$((10000 + r % (low - 10000 - N)))
    ports_free $(seq "$PORT" $((PORT + N))) && return 0
    tries=$((tries + 1))
  done
  die "no $((N + 1)) free consecutive ports found in 100 tries"
}

# write_conf: slurm.conf for N nodes on this host, every path under DIR.
write_conf() {
  local hw i listen
  # The node's real layout (CPUs, boards, sockets, cores, threads); no
  # RealMemory, so a node never drains for memory it lacks (three share one).
  hw=$(slurmd -C -f /dev/null | head -n 1 | tr ' ' '\n' |
    grep -E '^(CPUs|Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore)=' | tr '\n' ' ')
  [ -n "$hw" ] || die "slurmd -C did not report this host's CPUs"
  # The daemons listen on 127.0.0.1 only (NodeAddr, SlurmctldHost) rather
  # than on every address; srun then listens on the address this host's name
  # resolves to, so that name must resolve.
  listen="CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
"
  if ! getent hosts "$(uname -n)" > /dev/null; then
    echo "$prog: $(uname -n) does not resolve: the daemons listen on all addresses" >&2
    listen=""
  fi
  cat << EOF
# A ${N}-node Slurm cluster on one host, written by scripts/slurm/start.sh:
# one slurmd per node name (slurmd -N nX), each on its own loopback port.
ClusterName=prereg
SlurmctldHost=localhost
${listen}# No mailer here: else slurmctld logs that MailProg is invalid.
MailProg=/bin/true
SlurmctldPort=$PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# Our own munged, never the system one in /run/munge.
AuthInfo=socket=$SOCK
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd-%n.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
# Explicit, so that no plugstack.conf outside DIR is read.
PlugStackConfig=$D/etc/plugstack.conf
# No cgroups (no systemd, no delegated cgroup tree): processes are tracked
# by parent PID, and task/affinity binds CPUs with sched_setaffinity alone.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
# No slurmdbd: no sacct.
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
# The default 3 s delay would hold every batch job until the next pass.
SchedulerParameters=batch_sched_delay=0
# A dead slurmd's node is marked down about 25 s after (with the default,
# 300 s, minutes after); a node whose slurmd registers again with a valid
# configuration returns to service by itself.
SlurmdTimeout=5
ReturnToService=2
# Seconds between SIGTERM and SIGKILL of a cancelled step (default 30).
KillWait=5
EOF
  i=1
  while [ $i -le "$N" ]; do
    echo "NodeName=n$i NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((PORT + i)) ${hw}State=UNKNOWN"
    i=$((i + 1))
  done
  echo "PartitionName=loop Nodes=n[1-$N] Default=YES State=UP"
}

# start_munged: a fresh key, munged in the foreground, up when a credential
# it encodes also decodes.
start_munged() {
  local i=0
  mungekey --create --keyfile="$D/munge/munge.key" > /dev/null 2>&1 ||
    die "mungekey could not create $D/munge/munge.key"
  launch munged munged --foreground --key-file="$D/munge/munge.key" --socket="$SOCK" \
    --pid-file="$D/run/munged.pid" --seed-file="$D/munge/munged.seed" || return 1
  until munge -n -S "$SOCK" 2> /dev/null | unmunge -S "$SOCK" > /dev/null 2>&1; do
    recorded munged > /dev/null || return 1
    i=$((i + 1))
    [ $i -lt 100 ] || return 1
    sleep 0.1
  done
}

# wait_idle: 0 when sinfo shows all N nodes idle, 2 when a daemon ended,
# 1 after WAIT seconds.
wait_idle() {
  local end n name
  end=$(($(date +%s) + WAIT))
  while :; do
    for name in slurmctld $(seq -f 'slurmd-n%g' 1 "$N"); do
      recorded "$name" > /dev/null || {
        echo "$prog: $name ended" >&2
        return 2
      }
    done
    n=$(SLURM_CONF=$CONF timeout 5 sinfo -h -N -o '%N %t' 2> /dev/null | grep -c ' idle$')
    [ "$n" -eq "$N" ] && return 0
    [ "$(date +%s)" -lt "$end" ] || return 1
    sleep 0.1
  done
}

# fail WHY: stops what was started, then shows the logs' tails; a caller
# that stops reading (a closed pipe) must not keep it from the stop.
fail() {
  trap '' PIPE
  sh "$here/stop.sh" "$D" >&2
  echo "$prog: $*" >&2
  for f in "$D"/log/*; do
    [ -s "$f" ] && { echo "==> $f <==" && tail -n 15 "$f"; } >&2
  done
  exit 1
}

t0=$(date +%s.%N)
attempt=1
while :; do
  rm -rf "${D:?}/etc" "$D/munge" "$D/state" "$D/spool" "$D/run" "$D/log" "$PIDS" "$D/env"
  mkdir -p "$D/etc" "$D/munge" "$D/state" "$D/run" "$D/log" "$PIDS" ||
    die "cannot make the folders under $D"
  for i in $(seq 1 "$N"); do mkdir -p "$D/spool/n$i"; done
  : > "$D/etc/plugstack.conf"
  pick_ports
  write_conf > "$CONF"
  start_munged || fail "munged did not start"
  # -c: no saved jobs or node states (there are none in a fresh DIR)
  rc=0
  launch slurmctld slurmctld -D -c -f "$CONF" || rc=2
  # A slurmd that finds no slurmctld listening yet tries again a second
  # later: the nodes start once it listens (or has ended).
  i=0
  while [ $rc -eq 0 ] && ports_free "$PORT" && [ $i -lt 100 ]; do
    recorded slurmctld > /dev/null || rc=2
    i=$((i + 1))
    sleep 0.1
  done
  for i in $(seq 1 "$N"); do
    [ $rc -eq 0 ] || break
    launch "slurmd-n$i" slurmd -D -N "n$i" -f "$CONF" || rc=2
  done
  if [ $rc -eq 0 ]; then
    wait_idle
    rc=$?
  fi
  [ $rc -eq 0 ] && break
  # A port taken between the check and the bind: again with other ports.
  if [ $rc -eq 2 ] && [ $attempt -lt 3 ] &&
    grep -qs 'Address already in use' "$D"/log/slurm*; then
    echo "$prog: a port was taken meanwhile; again with other ports" >&2
    sh "$here/stop.sh" "$D" > /dev/null 2>&1
    attempt=$((attempt + 1))
    continue
  fi
  [ $rc -eq 2 ] && fail "a daemon ended during start-up"
  fail "not all $N nodes idle after $WAIT s:
$(SLURM_CONF=$CONF timeout 5 sinfo -N 2>&1)"
done

# The daemons' own pid files must name the processes recorded, or stop.sh
# would stop something else than what runs.
for name in munged slurmctld $(seq -f 'slurmd-n%g' 1 "$N"); do
  p=$(recorded "$name") || fail "$name ended"
  [ "$(cat "$D/run/$name.pid" 2> /dev/null)" = "$p" ] ||
    fail "$name: pid file says $(cat "$D/run/$name.pid" 2> /dev/null), recorded $p"
done

{
  echo "export SLURM_CONF=$CONF"
  echo "# munged socket (slurm finds it through AuthInfo in SLURM_CONF; munge -S)"
  echo "export PREREG_MUNGE_SOCKET=$SOCK"
} > "$D/env"
cat "$D/env"
echo "# $N nodes idle after $(echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f", $1 - $2 }') s;" \
  "ports $PORT-$((PORT + N)); pids:" $(for f in "$PIDS"/*; do
    echo "${f##*/}=$(cut -d' ' -f1 "$f")"
  done)
