#!/bin/sh
# rerun-sandbox-cost.sh PREREG [DATA]: runs the embedded experiment in full
# under its newest amended sheet and re-publishes it: the image built
# anew (scripts/rootfs.sh into the folder the sheet names), the sheet's
# newest amendment recorded in DATA (default: the study's data folder,
# studies/sandbox-cost/data, the committed run) when it is not yet, the plan's runs left, the report
# and verify. Prints the wall time of the run. Needs root.
# SPDX-License-Identifier: MIT
set -u

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: scripts/rerun-sandbox-cost.sh PREREG [DATA]" >&2
  exit 2
fi
case "$1" in
  /*) prereg=$1 ;;
  *) prereg="$(pwd)/$1" ;;
esac
src=$(cd "$(dirname "$0")/.." && pwd)
data="$src/studies/sandbox-cost/data"
case "${2-}" in
  '') ;;
  /*) data=$2 ;;
  *) data="$(pwd)/$2" ;;
esac
sheet="$src/studies/sandbox-cost/protocols/sandbox-cost.lua"
die() { echo "rerun-sandbox-cost.sh: $*" >&2; exit 1; }
[ -x "$prereg" ] || die "$prereg: no such program (make build)"
sh "$src/scripts/deps.sh" demo || exit 1
# The image's folder, as the sheet names it (vars.sc).
image=$(sed -n 's/^ *sc = "\(\/[^"]*\)",$/\1/p' "$sheet")
[ -n "$image" ] || die "$sheet names no image folder (vars.sc)"
SC_TIME=${SC_TIME:-$(dirname "$prereg")/sc-time} sh "$src/scripts/rootfs.sh" "$image" || die "the image cannot be built"
if ! "$prereg" status "$sheet" --data "$data" | grep -q "matches v"; then
  "$prereg" amend "$sheet" --data "$data" || exit 1
fi
t0=$(date +%s)
"$prereg" run "$sheet" --data "$data"
rc=$?
t1=$(date +%s)
echo "rerun-sandbox-cost.sh: prereg run took $((t1 - t0)) s (exit $rc)"
[ $rc -eq 0 ] || exit $rc
"$prereg" report "$sheet" --data "$data" || exit 1
"$prereg" verify "$sheet" --data "$data" || exit 1
