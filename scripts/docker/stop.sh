#!/bin/sh
# stop.sh DIR: stops what scripts/docker/start.sh started in DIR and what
# it left (containers, shims, runtime processes, mounts, cgroups), found by
# DIR's records and never by a process name; exit 1 if any survives.
# SPDX-License-Identifier: MIT
set -eu

if [ $# -ne 1 ]; then
  echo "usage: scripts/docker/stop.sh DIR" >&2
  exit 2
fi
case "$1" in
  /*) dir=$1 ;;
  *) dir="$(pwd)/$1" ;;
esac
dir=${dir%/}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/proc.sh"
DOCKER=${DOCKER:-/usr/bin/docker}

die() { echo "stop.sh: $*" >&2; exit 1; }
[ -n "$dir" ] && [ "$dir" != / ] || die "refusing DIR '/'"
# Only a folder start.sh prepared: its records are what may be stopped.
[ -f "$dir/containerd/config.toml" ] && [ -f "$dir/daemon.json" ] ||
  die "$dir was not prepared by scripts/docker/start.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ctr_sock="$dir/containerd/containerd.sock"
tasks="$dir/containerd/state/io.containerd.runtime.v2.task"

# The container IDs this engine knows (64 hex digits, unique to it).
container_ids() {
  for f in "$dir"/data/containers/* "$tasks"/*/* "$dir"/exec/runtime-*/*/*; do
    printf '%s\n' "${f##*/}"
  done | grep -E '^[0-9a-f]{64}$' | sort -u
}

# Roots of what is ours, as "PID START" (START "-": found just now): the
# recorded daemons; the shims, whose working folder is their bundle in
# containerd's state under DIR (they are re-parented to PID 1, and the
# runtime's processes are their children); every process in a cgroup
# named by one of our container IDs (a container's processes when its
# shim is gone).
roots() {
  [ ! -f "$dir/started.pids" ] || awk '{ print $2, $3 }' "$dir/started.pids"
  for c in /proc/[0-9]*/cwd; do
    case "$(readlink "$c" 2> /dev/null)" in
      "$tasks"/*) p=${c#/proc/} && echo "${p%/cwd} -" ;;
    esac
  done
  container_ids > "$tmp/ids"
  if [ -s "$tmp/ids" ]; then
    grep -lF -f "$tmp/ids" /proc/[0-9]*/cgroup 2> /dev/null |
      sed -e 's|^/proc/||' -e 's|/cgroup$| -|'
  fi
  return 0
}

# ours FILE: "PID START" of every live process of this engine, less this
# script and its callers.
ours() {
  proc_snapshot "$tmp/snap"
  roots > "$tmp/roots"
  proc_ancestors "$tmp/snap" $$ > "$tmp/self"
  proc_family "$tmp/snap" "$tmp/roots" |
    awk 'NR == FNR { self[$1] = 1; next } !($1 in self)' "$tmp/self" - > "$1"
}

alive() { [ "$(proc_start "$1")" = "$2" ]; }

# wait_gone FILE SECONDS: waits until no process of FILE is alive.
wait_gone() {
  t=0
  while [ $t -lt $(($2 * 10)) ]; do
    left=0
    while read -r p s; do
      if alive "$p" "$s"; then left=1; fi
    done < "$1"
    [ $left -eq 1 ] || return 0
    sleep 0.1
    t=$((t + 1))
  done
  return 1
}

signal_all() {
  while read -r p s; do
    if alive "$p" "$s"; then kill "-$2" "$p" 2> /dev/null || true; fi
  done < "$1"
}

# Safe beside anyone else's Docker: what is signalled descends from a
# recorded daemon, a shim whose bundle lies under DIR, or a process in a
# cgroup named by one of DIR's container IDs.
ours "$tmp/before"

# The containers first, at once (dockerd's own shutdown would give each
# its stop timeout, 10 s, for a PID 1 that ignores SIGTERM).
dockerd_rec=
[ ! -f "$dir/started.pids" ] ||
  dockerd_rec=$(awk '$1 == "dockerd" { print $2, $3 }' "$dir/started.pids")
# shellcheck disable=SC2086 # "PID START", two words
if [ -S "$dir/docker.sock" ] && [ -n "$dockerd_rec" ] && alive $dockerd_rec; then
  ids=$(timeout 20 "$DOCKER" -H "unix://$dir/docker.sock" ps -aq --no-trunc 2> /dev/null || true)
  if [ -n "$ids" ]; then
    timeout 60 "$DOCKER" -H "unix://$dir/docker.sock" rm -f $ids > /dev/null 2>&1 || true
  fi
fi

# dockerd, then containerd: each asked to end, then killed.
for name in dockerd containerd; do
  [ -f "$dir/started.pids" ] || break
  awk -v n="$name" '$1 == n { print $2, $3 }' "$dir/started.pids" > "$tmp/one"
  signal_all "$tmp/one" TERM
  if ! wait_gone "$tmp/one" 30; then
    echo "stop.sh: $name did not end on SIGTERM in 30 s: SIGKILL" >&2
    signal_all "$tmp/one" KILL
    wait_gone "$tmp/one" 10 || true
  fi
done

# What outlived the daemons (shims are detached from them by design, and
# their runtimes' processes with them): killed, rescanned until none.
i=0
while [ $i -lt 5 ]; do
  ours "$tmp/now"
  cat "$tmp/before" "$tmp/now" | sort -u > "$tmp/left"
  left=0
  while read -r p s; do
    if alive "$p" "$s"; then left=1; fi
  done < "$tmp/left"
  [ $left -eq 1 ] || break
  signal_all "$tmp/left" KILL
  wait_gone "$tmp/left" 10 || true
  i=$((i + 1))
done

# Shim sockets live outside DIR (containerd 1.6 puts them in
# /run/containerd/s/, named by a hash of DIR's socket path): remove ours.
for b in "$tasks"/*/*; do
  [ -f "$b/address" ] || continue
  a=$(sed 's|^unix://||' "$b/address")
  case "$a" in
    /run/containerd/s/*) [ ! -S "$a" ] || rm -f "$a" ;;
  esac
done

# Mounts under DIR, deepest first (overlay roots, shm, network namespaces).
awk -v d="$dir/" 'index($5, d) == 1 { print length($5), $5 }' /proc/self/mountinfo |
  sort -rn | cut -d' ' -f2- > "$tmp/mounts"
while read -r m; do
  umount "$m" 2> /dev/null || umount -l "$m" 2> /dev/null ||
    echo "stop.sh: cannot unmount $m" >&2
done < "$tmp/mounts"

# Container cgroups left by killed runtimes (rmdir removes only empty ones).
if [ -s "$tmp/ids" ] || { container_ids > "$tmp/ids" && [ -s "$tmp/ids" ]; }; then
  find /sys/fs/cgroup -mindepth 2 -type d 2> /dev/null |
    grep -F -f "$tmp/ids" | awk '{ print length($0), $0 }' | sort -rn |
    cut -d' ' -f2- | while read -r c; do rmdir "$c" 2> /dev/null || true; done
fi

rm -f "$dir/docker.sock" "$ctr_sock" "$ctr_sock.ttrpc"
status=0
ours "$tmp/end"
cat "$tmp/before" "$tmp/end" | sort -u > "$tmp/left"
while read -r p s; do
  if alive "$p" "$s"; then
    echo "stop.sh: pid $p is still alive: $(tr '\0' ' ' < "/proc/$p/cmdline" 2> /dev/null)" >&2
    status=1
  fi
done < "$tmp/left"
[ $status -ne 0 ] || mv "$dir/started.pids" "$dir/stopped.pids" 2> /dev/null || true
exit $status
