#!/bin/bash
# lifecycle.sh DIR: prints what the private engine in DIR leaves when a
# docker run client is killed or docker run fails, and what docker rm -f
# cleans up, for runc and runsc (a measurement for NOTES.md, not a test).
# SPDX-License-Identifier: MIT
set -u
if [ $# -ne 1 ]; then
  echo "usage: tests/docker/lifecycle.sh DIR" >&2
  exit 2
fi
dir=$1
D=${DOCKER:-/usr/bin/docker}
export DOCKER_HOST="unix://$dir/docker.sock"
ctr="/usr/bin/ctr -a $dir/containerd/containerd.sock -n moby"
parent=/prereg/lifecycle$$
ms() { echo $(($(date +%s%N) / 1000000)); }
count() { printf '%s\n' "$1" | grep -c .; }
# pids_naming TEXT: the processes whose command line (arguments joined by
# blanks) holds TEXT.
pids_naming() {
  local d c
  for d in /proc/[0-9]*; do
    c=$({ tr '\0' ' ' < "$d/cmdline"; } 2> /dev/null)
    case "$c" in *"$1"*) echo "${d#/proc/}" ;; esac
  done
}

state() {
  local shims procs
  shims=$(pids_naming "containerd-shim-runc-v2 -namespace moby -id ${cid:-none}" | tr '\n' ' ')
  procs=$(cat "/sys/fs/cgroup/memory$parent/${cid:-none}/cgroup.procs" 2> /dev/null | tr '\n' ' ')
  echo "  [$1] client $(kill -0 "$cl" 2> /dev/null && echo alive || echo gone);" \
    "docker ps -a: $($D ps -a --filter "name=^$2\$" --format '{{.Status}}');" \
    "shim pids: ${shims:-none}; pids in the memory cgroup: ${procs:-none}"
}

for rt in runc runsc; do
  for sig in KILL TERM INT; do
    n=lc-$rt-$sig-$$
    f=$(mktemp -u)
    $D run --rm --pull never --runtime=$rt --network none --cgroup-parent $parent \
      --name "$n" --cidfile "$f" prereg/busybox:1 sleep 300 > /dev/null 2>&1 &
    cl=$!
    sleep 2
    cid=$(cat "$f")
    echo "== $rt: SIG$sig to the docker run client of a running sleep 300"
    kill -"$sig" "$cl"
    sleep 3
    state "3 s later" "$n"
    if [ -n "$($D ps -aq --filter "name=^$n\$")" ]; then
      t0=$(ms)
      $D rm -f "$n" > /dev/null
      echo "  docker rm -f: $(($(ms) - t0)) ms"
      sleep 0.5
      state "after docker rm -f" "$n"
      echo "  cgroup $parent/CID: $([ -d "/sys/fs/cgroup/memory$parent/$cid" ] && echo kept || echo removed);" \
        "mounts naming the CID: $(grep -c "$cid" /proc/self/mountinfo)"
    fi
    wait "$cl" 2> /dev/null
    echo "  client exit status $?; cidfile $([ -s "$f" ] && echo kept || echo removed)"
    rm -f "$f"
  done
done

try() {
  local label=$1 f out rc t0 before
  shift
  f=$(mktemp -u)
  before=$($ctr containers ls -q)
  t0=$(ms)
  out=$($D run --rm --network none --cgroup-parent $parent --cidfile "$f" "$@" 2>&1)
  rc=$?
  echo "== $label: exit $rc in $(($(ms) - t0)) ms: $(printf '%s' "$out" | head -1 | cut -c1-240)"
  echo "   cidfile $([ -s "$f" ] && echo kept || echo removed);" \
    "docker ps -a: $(count "$($D ps -aq)");" \
    "containerd containers: $(count "$($ctr containers ls -q)") (before: $(count "$before"));" \
    "shims: $(count "$(pids_naming "-address $dir/containerd/containerd.sock")")"
  rm -f "$f"
}
try "missing image (--pull never)" --pull never no-such-image:1 true
try "unknown runtime" --pull never --runtime=bogus prereg/busybox:1 true
try "invalid option (--memory 1k)" --pull never --memory 1k prereg/busybox:1 true
$D create --name "lc-dup-$$" prereg/busybox:1 true > /dev/null
try "name in use" --pull never --name "lc-dup-$$" prereg/busybox:1 true
for rt in runc runsc; do
  try "missing command ($rt)" --pull never --runtime=$rt prereg/busybox:1 /no-such-command
  try "command exits 3 ($rt)" --pull never --runtime=$rt prereg/busybox:1 sh -c 'exit 3'
done
# A containerd container that Docker no longer knows (a failed runsc
# start): its task is deleted by force (ctr reports an error: the sandbox
# is gone), then the container, and its shim ends with it.
for id in $($ctr containers ls -q); do
  if [ -z "$($D ps -aq --no-trunc --filter "id=$id")" ]; then
    echo "== orphan containerd container $id, shim pids $(pids_naming "-id $id -address" | tr '\n' ' ')"
    echo "   ctr task delete -f: exit $($ctr task delete -f "$id" > /dev/null 2>&1; echo $?);" \
      "ctr container delete: exit $($ctr container delete "$id" > /dev/null 2>&1; echo $?)"
  fi
done
sleep 0.5
echo "shims left: $(count "$(pids_naming "-address $dir/containerd/containerd.sock")")"
$D rm -f "lc-dup-$$" > /dev/null
for h in /sys/fs/cgroup/*; do rmdir "$h$parent"/* "$h$parent" 2> /dev/null; done
true
