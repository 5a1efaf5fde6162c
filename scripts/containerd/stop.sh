#!/bin/sh
# stop.sh DIR: stops what scripts/containerd/start.sh started in DIR and
# what it left (tasks, shims, runc and runsc processes, mounts, container
# cgroups), found by DIR's records and never by a process name; exit 1 if
# any survives.
# SPDX-License-Identifier: MIT
set -eu

if [ $# -ne 1 ]; then
  echo "usage: scripts/containerd/stop.sh DIR" >&2
  exit 2
fi
case "$1" in
  /*) dir=$1 ;;
  *) dir="$(pwd)/$1" ;;
esac
dir=${dir%/}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../docker/proc.sh"
CTR=${CTR:-/usr/bin/ctr}

die() { echo "stop.sh: $*" >&2; exit 1; }
[ -n "$dir" ] && [ "$dir" != / ] || die "refusing DIR '/'"
# Only a folder start.sh prepared: its records are what may be stopped.
[ -f "$dir/config.toml" ] && [ -d "$dir/state" ] ||
  die "$dir was not prepared by scripts/containerd/start.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sock="$dir/containerd.sock"
tasks="$dir/state/io.containerd.runtime.v2.task"

# The container IDs this containerd ran: its task bundles and the runtime
# roots under DIR (NAMESPACE/ID each).
container_ids() {
  for f in "$tasks"/*/* "$dir"/runc/*/*; do
    [ -d "$f" ] && printf '%s\n' "${f##*/}"
  done | sort -u
}

# Roots of what is ours, as "PID START" (START "-": found just now): the
# recorded containerd; the shims, whose working folder is their bundle
# under DIR (re-parented to PID 1; the runtime's processes are their
# children); every process whose command line names DIR (runsc's sandbox
# and gofer: --root=DIR/runc/...); every process in a cgroup whose last
# component is one of our container IDs.
roots() {
  [ ! -f "$dir/started.pids" ] || awk '{ print $2, $3 }' "$dir/started.pids"
  for c in /proc/[0-9]*; do
    p=${c#/proc/}
    case "$(readlink "$c/cwd" 2> /dev/null)" in
      "$tasks"/*) echo "$p -" && continue ;;
    esac
    case "$({ tr '\0' ' ' < "$c/cmdline"; } 2> /dev/null)" in
      *"$dir/"*) echo "$p -" ;;
    esac
  done
  container_ids > "$tmp/ids"
  if [ -s "$tmp/ids" ]; then
    for c in /proc/[0-9]*/cgroup; do
      awk -F: 'NR == FNR { id[$0] = 1; next }
        { n = split($3, part, "/"); if (part[n] in id) { print FILENAME; exit } }' \
        "$tmp/ids" "$c" 2> /dev/null
    done | sed -e 's|^/proc/||' -e 's|/cgroup$| -|'
  fi
  return 0
}

# ours FILE: "PID START" of every live process of this containerd, less
# this script and its callers.
ours() {
  proc_snapshot "$tmp/snap"
  roots > "$tmp/roots"
  proc_ancestors "$tmp/snap" $$ > "$tmp/self"
  proc_family "$tmp/snap" "$tmp/roots" |
    awk 'NR == FNR { self[$1] = 1; next } !($1 in self)' "$tmp/self" - > "$1"
}

alive() { [ "$(proc_start "$1")" = "$2" ]; }

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

ours "$tmp/before"

# The tasks and containers first, through containerd while it answers.
rec=
[ ! -f "$dir/started.pids" ] ||
  rec=$(awk '$1 == "containerd" { print $2, $3 }' "$dir/started.pids")
# shellcheck disable=SC2086 # "PID START", two words
if [ -S "$sock" ] && [ -n "$rec" ] && alive $rec; then
  c="timeout 20 $CTR -a $sock"
  for ns in $($c namespaces ls -q 2> /dev/null || true); do
    for t in $($c -n "$ns" tasks ls -q 2> /dev/null || true); do
      $c -n "$ns" tasks kill -s SIGKILL "$t" > /dev/null 2>&1 || true
    done
    for t in $($c -n "$ns" tasks ls -q 2> /dev/null || true); do
      $c -n "$ns" tasks delete -f "$t" > /dev/null 2>&1 || true
    done
    for k in $($c -n "$ns" containers ls -q 2> /dev/null || true); do
      $c -n "$ns" containers delete "$k" > /dev/null 2>&1 || true
    done
  done
fi

# containerd: asked to end, then killed.
if [ -f "$dir/started.pids" ]; then
  awk '$1 == "containerd" { print $2, $3 }' "$dir/started.pids" > "$tmp/one"
  signal_all "$tmp/one" TERM
  if ! wait_gone "$tmp/one" 30; then
    echo "stop.sh: containerd did not end on SIGTERM in 30 s: SIGKILL" >&2
    signal_all "$tmp/one" KILL
    wait_gone "$tmp/one" 10 || true
  fi
fi

# What outlived containerd (shims are detached from it by design, and the
# runtimes' processes with them): killed, rescanned until none.
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

# Mounts under DIR, deepest first (container roots, snapshots).
awk -v d="$dir/" 'index($5, d) == 1 { print length($5), $5 }' /proc/self/mountinfo |
  sort -rn | cut -d' ' -f2- > "$tmp/mounts"
while read -r m; do
  umount "$m" 2> /dev/null || umount -l "$m" 2> /dev/null ||
    echo "stop.sh: cannot unmount $m" >&2
done < "$tmp/mounts"

# Container cgroups left by killed runtimes: leaf folders named by one of
# our container IDs (rmdir removes only empty ones).
container_ids > "$tmp/ids2"
cat "$tmp/ids" "$tmp/ids2" 2> /dev/null | sort -u > "$tmp/allids"
if [ -s "$tmp/allids" ]; then
  find /sys/fs/cgroup -mindepth 2 -type d 2> /dev/null |
    awk 'NR == FNR { id[$0] = 1; next }
      { n = split($0, part, "/"); if (part[n] in id) print length($0), $0 }' \
      "$tmp/allids" - | sort -rn | cut -d' ' -f2- |
    while read -r c; do rmdir "$c" 2> /dev/null || true; done
fi

rm -f "$sock" "$sock.ttrpc"
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
