#!/bin/bash
# probe.sh DIR RUNTIME [IDLE]: lists the host processes of one idle
# container of the private engine in DIR, why each belongs to it, their
# cgroups and PSS (a measurement for NOTES.md, not a test).
# SPDX-License-Identifier: MIT
set -eu

if [ $# -lt 2 ]; then
  echo "usage: tests/docker/probe.sh DIR runc|runsc [IDLE_SECONDS]" >&2
  exit 2
fi
dir=$1
rt=$2
idle=${3:-10}
D=${DOCKER:-/usr/bin/docker}
export DOCKER_HOST="unix://$dir/docker.sock"
parent="/prereg/probe$$"
name="probe-$rt-$$"
cidf=$(mktemp -u "${TMPDIR:-/tmp}/probe-cid.XXXXXX")
ms() { echo $(($(date +%s%N) / 1000000)); }

t0=$(ms)
$D run --rm --pull never --runtime="$rt" --network none --cgroup-parent "$parent" \
  --name "$name" --cidfile "$cidf" prereg/busybox:1 sleep 300 > /dev/null 2>&1 &
client=$!
until [ -s "$cidf" ]; do sleep 0.005; done
t_cid=$(ms)
cid=$(cat "$cidf")
mem="/sys/fs/cgroup/memory$parent/$cid"
until [ -n "$(cat "$mem/cgroup.procs" 2> /dev/null)" ]; do sleep 0.005; done
t_run=$(ms)
echo "runtime $rt  container $cid"
echo "cidfile written $((t_cid - t0)) ms after spawn; first process in $mem $((t_run - t0)) ms after spawn"
sleep "$idle"

init=$($D inspect -f '{{.State.Pid}}' "$cid")
echo "docker inspect .State.Pid = $init; docker run client pid $client"
# One pass over /proc: pid ppid, then the reasons.
declare -A ppid why
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  line=$({ cat "$d/stat"; } 2> /dev/null) || continue
  rest=${line##*) }
  set -- $rest
  ppid[$p]=$2
done
for p in "${!ppid[@]}"; do
  r=
  if grep -q "^[0-9]*:memory:$parent/$cid\$" "/proc/$p/cgroup" 2> /dev/null; then r="cgroup"; fi
  q=$p
  while [ -n "$q" ] && [ "$q" != 0 ] && [ "$q" != 1 ]; do
    if [ "$q" = "$init" ]; then r="$r${r:+,}init-descendant"; break; fi
    q=${ppid[$q]:-}
  done
  if { tr '\0' ' ' < "/proc/$p/cmdline"; } 2> /dev/null | grep -q "$cid"; then
    [ "$p" = "$client" ] || r="$r${r:+,}cmdline"
  fi
  q=$p
  while [ -n "$q" ] && [ "$q" != 0 ]; do
    q=${ppid[$q]:-}
    if [ "$q" = "$client" ]; then r="$r${r:+,}client-descendant"; break; fi
  done
  [ -z "$r" ] || why[$p]=$r
done
total=0
for p in $(printf '%s\n' "${!why[@]}" | sort -n); do
  pss=$(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2> /dev/null || echo 0)
  total=$((total + ${pss:-0}))
  echo "--- pid $p ppid ${ppid[$p]} comm $(cat "/proc/$p/comm") [${why[$p]}] PSS ${pss} kB"
  echo "    cmdline: $(tr '\0' ' ' < "/proc/$p/cmdline" | cut -c1-600)"
  echo "    cwd: $(readlink "/proc/$p/cwd")  exe: $(readlink "/proc/$p/exe")"
  echo "    cgroups: $(sort -t: -k3 "/proc/$p/cgroup" | awk -F: '{ c = $2 == "" ? "v2" : $2; a[$3] = a[$3] (a[$3] ? "," : "") c } END { for (k in a) printf "%s=%s  ", a[k], k }')"
done
echo "total PSS $total kB ($(awk -v k="$total" 'BEGIN { printf "%.1f", k / 1024 }') MiB)"
echo "memory.usage_in_bytes of $mem: $(cat "$mem/memory.usage_in_bytes")"

$D rm -f "$cid" > /dev/null
wait "$client" 2> /dev/null || true
rm -f "$cidf"
for h in /sys/fs/cgroup/*; do
  [ ! -d "$h$parent" ] || rmdir "$h$parent" 2> /dev/null || echo "left: $h$parent"
done
