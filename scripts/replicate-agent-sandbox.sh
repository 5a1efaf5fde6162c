#!/bin/sh
# replicate-agent-sandbox.sh PREREG [DATA] [--quick]: the replication of
# the published Docker study end to end: a private Docker engine
# (scripts/docker/start.sh in /var/tmp/prereg-engine, the folder the sheet
# names), the image (scripts/docker/agent-image.sh), the sheet's chain
# registered and amended as it was written (v0.lua, the published design,
# then each amendment in turn), the full run, the report and verify; the
# engine is stopped afterwards by its recorded PIDs, whatever happened.
# DATA defaults to the study's data folder,
# studies/agent-sandbox-replication/data (where the committed run lives);
# the chain's versions are the ones frozen there.
# Prints the wall time of the run. Needs root and scripts/deps.sh docker.
# SPDX-License-Identifier: MIT
set -u

if [ $# -lt 1 ]; then
  echo "usage: scripts/replicate-agent-sandbox.sh PREREG [DATA] [--quick]" >&2
  exit 2
fi
case "$1" in
  /*) prereg=$1 ;;
  *) prereg="$(pwd)/$1" ;;
esac
src=$(cd "$(dirname "$0")/.." && pwd)
study="$src/studies/agent-sandbox-replication"
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
engine=/var/tmp/prereg-engine
id=agent-sandbox-replication
sheet="$study/protocols/$id.lua"
chain="$study/data/$id/versions"

die() { echo "replicate-agent-sandbox.sh: $*" >&2; exit 1; }
[ -x "$prereg" ] || die "$prereg: no such program (make build)"
[ "$(id -u)" -eq 0 ] || die "needs root (the engine, debootstrap)"
sh "$src/scripts/deps.sh" docker || exit 1

# The engine's folder is the sheet's: an earlier engine of ours there is
# stopped first (never someone else's: stop.sh goes by its records).
if [ -f "$engine/started.pids" ]; then
  sh "$src/scripts/docker/stop.sh" "$engine" || die "an engine in $engine does not stop"
fi
if [ -e "$engine" ]; then
  grep -q " $engine/" /proc/self/mountinfo && die "$engine still has mounts"
  rm -rf "$engine"
fi
# Stopped by its records, then its folder (the image, the containers'
# layers) removed once nothing is mounted there.
stop_engine() {
  [ ! -f "$engine/started.pids" ] || sh "$src/scripts/docker/stop.sh" "$engine" || return
  grep -q " $engine/" /proc/self/mountinfo || rm -rf "$engine"
}
trap stop_engine EXIT
trap 'exit 130' INT TERM
sh "$src/scripts/docker/start.sh" "$engine" > /dev/null || die "the engine does not start"
image=$(SC_TIME=${SC_TIME:-$(dirname "$prereg")/sc-time} \
  sh "$src/scripts/docker/agent-image.sh" "$engine") || die "the image cannot be built"
echo "image: $image"

# The chain as written: the published design registered first, then each
# amendment recorded in turn (prereg amend takes one at a time).
if [ ! -d "$data/$id" ]; then
  "$prereg" register "$chain/v0.lua" --data "$data" || exit 1
fi
for v in "$chain/v1.lua" "$chain/v2.lua" "$sheet"; do
  if ! "$prereg" status "$sheet" --data "$data" 2> /dev/null | grep -q "matches v"; then
    "$prereg" amend "$v" --data "$data" > /dev/null 2>&1 || true
  fi
done
"$prereg" status "$sheet" --data "$data" | grep -q "matches v3" ||
  die "the sheet's chain in $data is not v0..v3 ending in $sheet"

t0=$(date +%s)
"$prereg" run "$sheet" --data "$data" $quick
rc=$?
t1=$(date +%s)
echo "replicate-agent-sandbox.sh: prereg run took $((t1 - t0)) s (exit $rc)"
[ $rc -eq 0 ] || exit $rc
"$prereg" report "$sheet" --data "$data" || exit 1
"$prereg" verify "$sheet" --data "$data" || exit 1
