#!/bin/bash
# smoke.sh: scripts/docker end to end: two private engines side by side,
# the offline image, runc and runsc containers, and stops (one after a
# crash) that leave nothing of theirs and nothing of the other's touched.
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/../lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/scripts/docker/proc.sh"
D=/usr/bin/docker
# Needs root and the packages of scripts/deps.sh' Docker group.
for b in "$D" /usr/sbin/dockerd /usr/bin/containerd /usr/bin/runsc; do
  [ -x "$b" ] || { bad "$b missing (apt-get install docker.io runsc)"; done_testing; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pdk.XXXXXX")
a="$tmp/a"
b="$tmp/b"
cleanup() {
  local e
  for e in "$a" "$b"; do
    [ ! -f "$e/started.pids" ] || sh "$src/scripts/docker/stop.sh" "$e" > /dev/null 2>&1 || true
  done
  for e in /sys/fs/cgroup/*; do rmdir "$e/prereg-smoke$$" 2> /dev/null || true; done
  grep -q " $tmp/" /proc/self/mountinfo || rm -rf "$tmp"
}
on_exit cleanup

# pids_of ENGINE: "PID START" of its daemons, its shims and runtime
# helpers (found by the container IDs on their command lines) and all
# their descendants.
pids_of() {
  local e=$1 cid
  awk '{ print $2, $3 }' "$e/started.pids" > "$tmp/roots"
  for cid in $(DOCKER_HOST="unix://$e/docker.sock" $D ps -q --no-trunc); do
    grep -laF -- "$cid" /proc/[0-9]*/cmdline 2> /dev/null |
      cut -d/ -f3 | sed 's/$/ -/' >> "$tmp/roots"
  done
  proc_snapshot "$tmp/snap"
  proc_family "$tmp/snap" "$tmp/roots"
}
none_alive() {
  local p s
  while read -r p s; do
    if [ -n "$s" ] && [ "$(proc_start "$p")" = "$s" ]; then
      echo "still alive: $p $(tr '\0' ' ' < "/proc/$p/cmdline")" >&2
      return 1
    fi
  done < "$1"
  return 0
}

t0=$(date +%s)
expect 0 "start.sh starts engine a" sh "$src/scripts/docker/start.sh" "$a"
check_grep "start.sh prints the DOCKER_HOST line" "^export DOCKER_HOST=unix://$a/docker.sock\$" "$out"
expect 0 "start.sh starts engine b beside it" sh "$src/scripts/docker/start.sh" "$b"
export DOCKER_HOST="unix://$a/docker.sock"
expect 0 "docker info answers on a's socket" $D info --format '{{.DockerRootDir}} {{.CgroupDriver}}'
check_grep "a keeps its data under its folder, cgroupfs driver" "^$a/data cgroupfs\$" "$out"
expect 0 "runsc is registered" $D info --format '{{json .Runtimes}}'
check_grep "runsc runs with --network=none" '"runsc":\{"path":"/usr/bin/runsc","runtimeArgs":\["--network=none"\]\}' "$out"
listeners=$(ss -ltnupH 2> /dev/null | grep -E "pid=($(awk '{ print $2 }' "$a/started.pids" "$b/started.pids" | paste -sd'|')),") || true
check "the daemons listen on no TCP or UDP port" test -z "$listeners"

expect 0 "image.sh builds and loads the image" sh "$src/scripts/docker/image.sh" "$a"
id1=$out
check_grep "image.sh prints the image ID" '^sha256:[0-9a-f]{64}$' "$id1"
expect 0 "image.sh again, into engine b" sh "$src/scripts/docker/image.sh" "$b"
check "the same image ID from a second build" test "$out" = "$id1"

expect 0 "a --rm container under runc" $D run --rm --pull never --runtime=runc --network none --cgroup-parent "/prereg-smoke$$" prereg/busybox:1 sh -c 'echo hello from $(cat /proc/1/comm)'
check_grep "runc ran the command" '^hello from sh$' "$out"
expect 0 "a --rm container under runsc" $D run --rm --pull never --runtime=runsc --network none --cgroup-parent "/prereg-smoke$$" prereg/busybox:1 dmesg
check_grep "runsc ran it in gVisor" 'Starting gVisor' "$out"
expect 0 "docker ps -a" $D ps -aq
check "no container left after --rm containers ended" test -z "$out"

# Containers running while the engines stop: each engine must take its
# own shims and sandboxes down, and only those.
for e in "$a" "$b"; do
  for rt in runc runsc; do
    expect 0 "a detached $rt container in $(basename "$e")" \
      env DOCKER_HOST="unix://$e/docker.sock" $D run -d --pull never --runtime=$rt --network none \
      --cgroup-parent "/prereg-smoke$$" prereg/busybox:1 sleep 300
  done
done
pids_of "$a" > "$tmp/a.pids"
pids_of "$b" > "$tmp/b.pids"
check "engine a runs its daemons, 2 shims, a container and a sandbox and gofer" \
  test "$(wc -l < "$tmp/a.pids")" -ge 7

# b's daemons die first, as in a crash: its shims and sandboxes are then
# known only through containerd's state and the cgroups under b.
while read -r n p s; do
  if [ "$(proc_start "$p")" = "$s" ]; then kill -KILL "$p"; fi
done < "$b/started.pids"
expect 0 "stop.sh stops engine b after its daemons were killed" sh "$src/scripts/docker/stop.sh" "$b"
check "nothing b started is alive" none_alive "$tmp/b.pids"
check "no mount left under b" test -z "$(grep -F " $b/" /proc/self/mountinfo)"
alive_a=0
while read -r p s; do
  if [ "$(proc_start "$p")" = "$s" ]; then alive_a=$((alive_a + 1)); fi
done < "$tmp/a.pids"
check "every process of a outlives b's stop" test "$alive_a" -eq "$(wc -l < "$tmp/a.pids")"
expect 0 "engine a still answers" $D ps -q
check "a's two containers still run" test "$(printf '%s\n' "$out" | grep -c .)" -eq 2

expect 0 "stop.sh stops engine a" sh "$src/scripts/docker/stop.sh" "$a"
check "nothing a started is alive" none_alive "$tmp/a.pids"
check "no mount left under a" test -z "$(grep -F " $a/" /proc/self/mountinfo)"
left=$(find /sys/fs/cgroup -mindepth 2 -maxdepth 2 -type d -path "*/prereg-smoke$$/*" 2> /dev/null)
check "the containers' cgroups are removed" test -z "$left"
expect 0 "stop.sh twice is harmless" sh "$src/scripts/docker/stop.sh" "$a"
echo "smoke.sh: $(($(date +%s) - t0)) s"
done_testing 30
