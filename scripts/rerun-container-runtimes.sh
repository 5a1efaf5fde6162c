#!/bin/sh
# rerun-container-runtimes.sh PREREG [DATA] [--quick]: the container-
# runtimes study end to end: a private containerd (scripts/containerd/
# start.sh in /var/tmp/prereg-containerd, the folder the sheet names),
# the image (scripts/containerd/bench-image.sh), the sheet's chain
# registered and amended as it was written (the committed data folder's
# versions/v0.lua, with the CRI-O arm, whose run is refused here, then the sheet's amendment),
# the full run, the report and verify; the containerd is stopped
# afterwards by its recorded PID, whatever happened. DATA defaults to the
# study's data folder (studies/container-runtimes/data, where the
# committed run lives). Prints the wall time of the run. Needs root and
# scripts/deps.sh containerd.
# SPDX-License-Identifier: MIT
set -u

if [ $# -lt 1 ]; then
  echo "usage: scripts/rerun-container-runtimes.sh PREREG [DATA] [--quick]" >&2
  exit 2
fi
case "$1" in
  /*) prereg=$1 ;;
  *) prereg="$(pwd)/$1" ;;
esac
src=$(cd "$(dirname "$0")/.." && pwd)
study="$src/studies/container-runtimes"
data="$study/data"
quick=
for a in "${2-}" "${3-}"; do
  case "$a" in
    '') ;;
    --quick) quick=--quick ;;
    /*) data=$a ;;
    *) data="$(pwd)/$a" ;;
  esac
done
ctrd=/var/tmp/prereg-containerd
sheet="$study/protocols/container-runtimes.lua"
# The first version as it was frozen: the committed record is its only copy.
v0="$study/data/container-runtimes/versions/v0.lua"
id=container-runtimes

die() { echo "rerun-container-runtimes.sh: $*" >&2; exit 1; }
[ -x "$prereg" ] || die "$prereg: no such program (make build)"
[ "$(id -u)" -eq 0 ] || die "needs root (containerd, runc, runsc)"
sh "$src/scripts/deps.sh" containerd || exit 1

# The containerd's folder is the sheet's: an earlier one of ours there is
# stopped first (never someone else's: stop.sh goes by its records).
if [ -f "$ctrd/started.pids" ]; then
  sh "$src/scripts/containerd/stop.sh" "$ctrd" || die "a containerd in $ctrd does not stop"
fi
if [ -e "$ctrd" ]; then
  grep -q " $ctrd/" /proc/self/mountinfo && die "$ctrd still has mounts"
  rm -rf "$ctrd"
fi
stop_containerd() {
  [ ! -f "$ctrd/started.pids" ] || sh "$src/scripts/containerd/stop.sh" "$ctrd" || return
  grep -q " $ctrd/" /proc/self/mountinfo || rm -rf "$ctrd"
}
trap stop_containerd EXIT
trap 'exit 130' INT TERM
sh "$src/scripts/containerd/start.sh" "$ctrd" > /dev/null || die "the containerd does not start"
image=$(sh "$src/scripts/containerd/bench-image.sh" "$ctrd") || die "the image cannot be built"
echo "image: $image"

# The chain as written: v0 registered, its run refused by the CRI-O arm
# (shown), then the amendment that drops it.
if [ ! -d "$data/$id" ]; then
  "$prereg" register "$v0" --data "$data" || exit 1
fi
if ! "$prereg" status "$sheet" --data "$data" 2> /dev/null | grep -q "matches v1"; then
  if "$prereg" run "$v0" --data "$data" $quick; then
    die "the first version ran: CRI-O is installed here, so the amendment does not hold"
  fi
  "$prereg" amend "$sheet" --data "$data" || exit 1
fi
"$prereg" status "$sheet" --data "$data" | grep -q "matches v1" ||
  die "the sheet's chain in $data is not v0, v1 ending in $sheet"

t0=$(date +%s)
"$prereg" run "$sheet" --data "$data" $quick
rc=$?
t1=$(date +%s)
echo "rerun-container-runtimes.sh: prereg run took $((t1 - t0)) s (exit $rc)"
[ $rc -eq 0 ] || exit $rc
"$prereg" report "$sheet" --data "$data" || exit 1
"$prereg" verify "$sheet" --data "$data" || exit 1
