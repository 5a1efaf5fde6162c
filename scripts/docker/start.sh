#!/bin/sh
# start.sh DIR: starts a private Docker engine (its own containerd and
# dockerd, runtimes runc and runsc) whose files, sockets and mounts all lie
# under DIR; prints the DOCKER_HOST line. stop.sh DIR stops it.
# SPDX-License-Identifier: MIT
set -eu

if [ $# -ne 1 ]; then
  echo "usage: scripts/docker/start.sh DIR" >&2
  exit 2
fi
case "$1" in
  /*) dir=$1 ;;
  *) dir="$(pwd)/$1" ;;
esac
dir=${dir%/}

die() { echo "start.sh: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/proc.sh"

DOCKERD=${DOCKERD:-/usr/sbin/dockerd}
CONTAINERD=${CONTAINERD:-/usr/bin/containerd}
DOCKER=${DOCKER:-/usr/bin/docker}
RUNSC=${RUNSC:-/usr/bin/runsc}
WAIT=${DOCKER_START_WAIT:-60}
for b in "$DOCKERD" "$DOCKER" "$CONTAINERD" "$RUNSC" /usr/bin/containerd-shim-runc-v2; do
  [ -x "$b" ] || die "$b missing (apt-get install docker.io runsc)"
done
[ "$(id -u)" -eq 0 ] || die "needs root (dockerd and runsc create namespaces and cgroups)"
case "$dir" in
  *[[:space:]]* | *'"'* | *\\*) die "DIR must not hold blanks, quotes or backslashes: $dir" ;;
esac
# A unix socket path holds at most 107 bytes; the longest is containerd's
# ttrpc socket.
ctr_sock="$dir/containerd/containerd.sock"
[ ${#ctr_sock} -le 100 ] || die "DIR too long for its sockets (keep it under 70 characters): $dir"

# The daemons are already ours and alive: refuse rather than start twins.
if [ -f "$dir/started.pids" ]; then
  while read -r name pid start; do
    if [ "$(proc_start "$pid")" = "$start" ]; then
      die "$name (pid $pid) from an earlier start is still running: scripts/docker/stop.sh $dir"
    fi
  done < "$dir/started.pids"
fi

mkdir -p "$dir/containerd/root" "$dir/containerd/state" "$dir/containerd/opt" \
  "$dir/data" "$dir/exec"
chmod 0711 "$dir"
rm -f "$dir/started.pids" "$dir/stopped.pids" "$dir/docker.sock" \
  "$dir/dockerd.pid" "$ctr_sock" "$ctr_sock.ttrpc"

# containerd is started here: dockerd, left to start its own, would first
# look for /run/containerd/containerd.sock and use that containerd,
# someone else's. No CRI (it listens on TCP), no debug or metrics socket,
# /opt/containerd moved under DIR.
cat > "$dir/containerd/config.toml" << EOF
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
oom_score = 0
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "$ctr_sock"
  tcp_address = ""

[ttrpc]
  address = "$ctr_sock.ttrpc"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/containerd/opt"
EOF

# runsc refuses a --network none container unless told there is no
# network to set up (it would otherwise run in the root network
# namespace). No bridge, iptables or forwarding: the host's network is
# left alone.
cat > "$dir/daemon.json" << EOF
{
  "runtimes": {
    "runsc": {
      "path": "$RUNSC",
      "runtimeArgs": ["--network=none"]
    }
  },
  "default-runtime": "runc",
  "exec-opts": ["native.cgroupdriver=cgroupfs"],
  "bridge": "none",
  "iptables": false,
  "ip6tables": false,
  "ip-forward": false,
  "ip-masq": false,
  "userland-proxy": false,
  "live-restore": false,
  "deprecated-key-path": "$dir/key.json",
  "log-level": "info"
}
EOF

# Each daemon leads a session of its own (a signal to the caller's process
# group does not reach it) and writes its own PID before it becomes the
# daemon (exec keeps the PID), so the record is exact.
spawn() {
  name=$1
  log=$2
  shift 2
  setsid sh -c 'echo $$ > "$0"; exec "$@"' "$dir/$name.spawn" "$@" \
    < /dev/null > "$log" 2>&1 &
  i=0
  while [ ! -s "$dir/$name.spawn" ] && [ $i -lt 100 ]; do
    sleep 0.05
    i=$((i + 1))
  done
  [ -s "$dir/$name.spawn" ] || die "$name did not start"
  pid=$(cat "$dir/$name.spawn")
  rm -f "$dir/$name.spawn"
  st=$(proc_start "$pid") || true
  [ -n "$st" ] || die "$name (pid $pid) exited at once: $(tail -n 20 "$log")"
  echo "$name $pid $st" >> "$dir/started.pids"
}

fail_log() {
  echo "start.sh: $1" >&2
  echo "--- $2 (last lines)" >&2
  tail -n 30 "$2" >&2
  "$here/stop.sh" "$dir" >&2 || true
  exit 1
}

spawn containerd "$dir/containerd.log" "$CONTAINERD" --config "$dir/containerd/config.toml"
t=0
while [ ! -S "$ctr_sock" ]; do
  [ $t -lt $((WAIT * 10)) ] || fail_log "containerd did not open $ctr_sock in ${WAIT}s" "$dir/containerd.log"
  kill -0 "$pid" 2> /dev/null || fail_log "containerd exited" "$dir/containerd.log"
  sleep 0.1
  t=$((t + 1))
done

# No registry is reachable here: a proxy that refuses at once turns an
# accidental pull (a missing image) into a quick local error rather than
# DNS queries and connection attempts.
spawn dockerd "$dir/dockerd.log" env HTTP_PROXY=http://127.0.0.1:9 \
  HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY= "$DOCKERD" \
  --config-file "$dir/daemon.json" \
  --data-root "$dir/data" \
  --exec-root "$dir/exec" \
  --pidfile "$dir/dockerd.pid" \
  --containerd "$ctr_sock" \
  -H "unix://$dir/docker.sock"
t=0
until "$DOCKER" -H "unix://$dir/docker.sock" info > /dev/null 2>&1; do
  [ $t -lt $((WAIT * 5)) ] || fail_log "dockerd did not answer in ${WAIT}s" "$dir/dockerd.log"
  kill -0 "$pid" 2> /dev/null || fail_log "dockerd exited" "$dir/dockerd.log"
  sleep 0.2
  t=$((t + 1))
done
echo "export DOCKER_HOST=unix://$dir/docker.sock"
