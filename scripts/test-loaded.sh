#!/bin/bash
# test-loaded.sh [N]: `make test` in N fresh clones of this checkout's
# HEAD (default 3), one after another, while a busy loop per core holds
# the machine: the suite must not depend on the machine's speed. Each
# run's whole output is in scratch/loaded-I.out, a line per run on the
# screen; the busy loops are stopped by PID. Exit 1 when a run failed.
# SPDX-License-Identifier: MIT
set -u
n=${1:-3}
case "$n" in '' | *[!0-9]*) echo "usage: scripts/test-loaded.sh [N]" >&2; exit 2 ;; esac
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$src/scratch"
loops=()
for _ in $(seq "$(nproc)"); do
  sh -c 'while :; do :; done' &
  loops+=($!)
done
stop() { kill "${loops[@]}" 2>/dev/null; }
trap stop EXIT
fail=0
for i in $(seq "$n"); do
  d=$(mktemp -d /tmp/prereg-loaded.XXXXXX)
  git clone -q "$src" "$d/src"
  t0=$(date +%s)
  (cd "$d/src" && make test) > "$src/scratch/loaded-$i.out" 2>&1
  rc=$?
  summary=$(grep -E "tests passed" "$src/scratch/loaded-$i.out" | tail -n 1)
  printf 'run %d: exit %d in %d s, %s; load %s\n' "$i" "$rc" \
    $(($(date +%s) - t0)) "${summary:-no summary}" "$(cut -d' ' -f1-3 /proc/loadavg)"
  [ $rc -eq 0 ] && rm -rf "$d" || fail=1
done
exit $fail
