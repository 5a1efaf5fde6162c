#!/bin/sh
# start.sh DIR: starts a private containerd (no Docker) whose root, state,
# sockets and runtime roots all lie under DIR, for `ctr` to run containers
# under runc and under runsc (the runc shim running DIR/runsc-network-none,
# /usr/bin/runsc with --network=none); prints the ctr address line.
# stop.sh DIR stops it, and all it left, by its records.
# SPDX-License-Identifier: MIT
set -eu

if [ $# -ne 1 ]; then
  echo "usage: scripts/containerd/start.sh DIR" >&2
  exit 2
fi
case "$1" in
  /*) dir=$1 ;;
  *) dir="$(pwd)/$1" ;;
esac
dir=${dir%/}

die() { echo "start.sh: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../docker/proc.sh"

CONTAINERD=${CONTAINERD:-/usr/bin/containerd}
CTR=${CTR:-/usr/bin/ctr}
RUNSC=${RUNSC:-/usr/bin/runsc}
WAIT=${CONTAINERD_START_WAIT:-60}
for b in "$CONTAINERD" "$CTR" "$RUNSC" /usr/bin/containerd-shim-runc-v2; do
  [ -x "$b" ] || die "$b missing (apt-get install containerd runc runsc)"
done
[ "$(id -u)" -eq 0 ] || die "needs root (containerd creates namespaces, mounts and cgroups)"
case "$dir" in
  *[[:space:]]* | *'"'* | *\\*) die "DIR must not hold blanks, quotes or backslashes: $dir" ;;
esac
# A unix socket path holds at most 107 bytes; the longest is the ttrpc one.
sock="$dir/containerd.sock"
[ ${#sock} -le 100 ] || die "DIR too long for its sockets (keep it under 80 characters): $dir"

# Ours and alive already: refuse rather than start a twin.
if [ -f "$dir/started.pids" ]; then
  while read -r name pid start; do
    if [ "$(proc_start "$pid")" = "$start" ]; then
      die "$name (pid $pid) from an earlier start is still running: scripts/containerd/stop.sh $dir"
    fi
  done < "$dir/started.pids"
fi

mkdir -p "$dir/root" "$dir/state" "$dir/opt" "$dir/runc" "$dir/fifo"
chmod 0711 "$dir"
rm -f "$dir/started.pids" "$dir/stopped.pids" "$sock" "$sock.ttrpc"

# No CRI (it listens on TCP), no debug or metrics socket, /opt/containerd
# moved under DIR; the system's /run/containerd is never named.
cat > "$dir/config.toml" << EOT
version = 2
root = "$dir/root"
state = "$dir/state"
oom_score = 0
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "$sock"
  tcp_address = ""

[ttrpc]
  address = "$sock.ttrpc"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/opt"
EOT

# runsc as the runc shim runs it, with --network=none: Debian 12's runsc
# (20221219) takes any network namespace for the host's on Linux 6.x (it
# tests for net.core.rmem_default, which every namespace has now) and
# refuses to start a container; with none, the container gets the
# loopback of gVisor's own netstack. `ctr run --runc-binary` takes it.
cat > "$dir/runsc-network-none" << EOT
#!/bin/sh
exec $RUNSC --network=none "\$@"
EOT
chmod 0755 "$dir/runsc-network-none"

# containerd leads a session of its own (a signal to the caller's process
# group does not reach it) and writes its PID before it execs (exec keeps
# the PID), so the record is exact.
setsid sh -c 'echo $$ > "$0"; exec "$@"' "$dir/containerd.spawn" \
  env HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY= \
  "$CONTAINERD" --config "$dir/config.toml" \
  < /dev/null > "$dir/containerd.log" 2>&1 &
i=0
while [ ! -s "$dir/containerd.spawn" ] && [ $i -lt 100 ]; do
  sleep 0.05
  i=$((i + 1))
done
[ -s "$dir/containerd.spawn" ] || die "containerd did not start"
pid=$(cat "$dir/containerd.spawn")
rm -f "$dir/containerd.spawn"
st=$(proc_start "$pid") || true
[ -n "$st" ] || die "containerd (pid $pid) exited at once: $(tail -n 20 "$dir/containerd.log")"
echo "containerd $pid $st" >> "$dir/started.pids"

t=0
until [ -S "$sock" ] && "$CTR" -a "$sock" version > /dev/null 2>&1; do
  if [ $t -ge $((WAIT * 10)) ] || ! kill -0 "$pid" 2> /dev/null; then
    echo "start.sh: containerd did not answer on $sock" >&2
    tail -n 30 "$dir/containerd.log" >&2
    sh "$here/stop.sh" "$dir" >&2 || true
    exit 1
  fi
  sleep 0.1
  t=$((t + 1))
done
echo "export CONTAINERD_ADDRESS=$sock"
