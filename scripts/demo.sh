#!/bin/sh
# demo.sh PREREG: prereg's own experiment end to end on this machine, in a
# scratch data folder: build the image, check the sheets, register the
# first version of sandbox-cost and amend it as it was amended (twice:
# idle-memory's command, then the gVisor arm), run its four arms with
# --quick (at most 3 rounds per workload, recorded in every row and in the
# report), analyze, report. `make demo` calls it after building. Every
# step says what it did; a step that cannot be done is named, with
# prereg's own message, and the demo ends with exit status 1. It never
# pretends.
# SPDX-License-Identifier: MIT
set -u

if [ $# -ne 1 ]; then
  echo "usage: scripts/demo.sh PREREG_BINARY" >&2
  exit 2
fi
case "$1" in
  /*) prereg=$1 ;;
  *) prereg="$(pwd)/$1" ;;
esac
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src" || exit 1
[ -x "$prereg" ] || { echo "demo: $prereg: no such program (make build)" >&2; exit 2; }

# The sheet names this folder (an absolute path: runs happen in folders of
# their own, not in the checkout).
image=/var/tmp/prereg-sandbox-cost-v2
# Absolute: prereg hands $PREREG_METRICS to commands as a path under it.
data="$src/scratch/demo-data"
sheet=protocols/sandbox-cost.lua
first=protocols/sandbox-cost/v0.lua
second=protocols/sandbox-cost/v1.lua
t0=$(date +%s)
failed=""

say() { printf '\n== %s\n' "$*"; }
# do_step NAME CMD...: runs CMD; on failure records NAME and says why.
do_step() {
  name=$1
  shift
  if "$@"; then
    return 0
  fi
  echo "demo: could not $name (exit $?)" >&2
  failed="$failed\n  - $name"
  return 1
}
finish() {
  t1=$(date +%s)
  say "Done in $((t1 - t0)) s"
  if [ -n "$failed" ]; then
    printf 'demo: these steps could not be done:%b\n' "$failed" >&2
    exit 1
  fi
  exit 0
}

say "Image: $image (scripts/rootfs.sh, from this machine's packages)"
do_step "build the image" sh scripts/rootfs.sh "$image" || finish

say "Scratch data folder: $data (removed first)"
rm -rf "$data"
mkdir -p "$data"

say "Check the sheets"
for s in "$sheet" protocols/agent-sandbox.lua \
  protocols/agent-sandbox-replication.lua protocols/k8s-runtimes.lua; do
  do_step "check $s" "$prereg" check "$s" --data "$data" || true
done
[ -z "$failed" ] || finish

say "Register the first version ($first), then amend it ($second, $sheet)"
do_step "register $first" "$prereg" register "$first" --data "$data" ||
  finish
do_step "amend to $second" "$prereg" amend "$second" --data "$data" || finish
do_step "amend to $sheet" "$prereg" amend "$sheet" --data "$data" || finish

say "Run bare, bwrap, runc and gvisor with --quick (at most 3 rounds per workload; the rows and the report say so)"
do_step "run $sheet --quick" "$prereg" run "$sheet" --quick --data "$data" ||
  finish

# The analysis and the report count the quick rows and say so (quick=1
# is in every row).
say "Report"
do_step "report" "$prereg" report "$sheet" --data "$data" || finish

say "Results (prereg analyze)"
do_step "analyze" "$prereg" analyze "$sheet" --data "$data" ||
  finish
n=$("$prereg" analyze "$sheet" --json --data "$data" 2>/dev/null |
  grep -o '"ratio"' | wc -l)
if [ "$n" -eq 0 ]; then
  echo "demo: the analysis compared no arm: it counted none of the runs" >&2
  failed="$failed\n  - analyze the --quick runs (none was counted)"
fi

say "Verify the frozen data"
do_step "verify" "$prereg" verify "$sheet" --data "$data" || true

html="$data/sandbox-cost/report/report.html"
if [ -f "$html" ]; then
  say "Report: $html"
else
  echo "demo: no report at $html" >&2
  failed="$failed\n  - find the report at $html"
fi
finish
