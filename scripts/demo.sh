#!/bin/sh
# demo.sh PREREG [WORKLOAD]: prereg's own experiment end to end on this
# machine, in a scratch data folder: build the image, check the sheets,
# register the first version of sandbox-cost and amend it as it was
# amended, run it with --quick (the fewest rounds per workload whose
# intervals reach their level, 5 or more at 95%, recorded in
# every row and in the report; WORKLOAD alone when given), report, verify,
# and show the results. `make demo` calls it after building. The screen
# gets a line per step and the results; every command's whole output goes
# to the log. A step that cannot be done is named, with the end of its
# output, and the demo ends with exit status 1. It never pretends.
# PREREG_DEMO_DATA: the scratch data folder (default scratch/demo-data).
# SC_TIME: the static inner clock the image holds (default: the sc-time
# the build made beside PREREG).
# SPDX-License-Identifier: MIT
set -u

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: scripts/demo.sh PREREG_BINARY [WORKLOAD]" >&2
  exit 2
fi
case "$1" in
  /*) prereg=$1 ;;
  *) prereg="$(pwd)/$1" ;;
esac
only=${2:-}
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src" || exit 1
[ -x "$prereg" ] || { echo "demo: $prereg: no such program (make build)" >&2; exit 2; }

# The study is a repository of its own: its sheets, assets and data.
study=studies/sandbox-cost
sheet=$study/protocols/sandbox-cost.lua
# The image's folder, as the sheet names it (its var sc: an absolute
# path, since runs happen in folders of their own, not in the checkout).
image=$(sed -n 's/^ *sc = "\(\/[^"]*\)",$/\1/p' "$sheet")
[ -n "$image" ] || { echo "demo: $sheet names no image folder (vars.sc)" >&2; exit 2; }
# Absolute: prereg hands $PREREG_METRICS to commands as a path under it.
data=${PREREG_DEMO_DATA:-$src/scratch/demo-data}
case "$data" in /*) ;; *) data="$src/$data" ;; esac
log="$data.log"
versions=$study/data/sandbox-cost/versions
first=$versions/v0.lua
out="$data.step"
t0=$(date +%s)

# The log's name as the user would type it.
short() { case "$1" in "$src"/*) echo "${1#"$src"/}" ;; *) echo "$1" ;; esac; }

# step LABEL CMD...: runs CMD, its output (both streams) into $out and the
# log; on failure says which step, with the end of its output, and ends
# the demo.
step() {
  label=$1
  shift
  ts=$(date +%s)
  printf '\n== %s: %s\n' "$label" "$*" >> "$log"
  "$@" > "$out" 2>&1
  rc=$?
  cat "$out" >> "$log"
  dt=$(($(date +%s) - ts))
  if [ $rc -ne 0 ]; then
    printf '  %-9s FAILED (exit %d): %s\n' "$label" "$rc" "$*"
    tail -n 8 "$out" | sed 's/^/    | /'
    printf 'demo: could not %s; the whole output is in %s\n' "$label" \
      "$(short "$log")" >&2
    exit 1
  fi
}
# done_step LABEL TEXT: the step's line on the screen.
done_step() { printf '  %-9s %-58s %4d s\n' "$1" "$2" "$dt"; }

mkdir -p "$(dirname "$data")"
rm -rf "$data"
mkdir -p "$data"
: > "$log"
arms="bare vs bubblewrap vs runc vs gVisor"
what="$arms on five workloads"
[ -n "$only" ] && what="$arms, workload $only"
echo "prereg demo: sandbox-cost, $what, --quick"
echo "  (every command's whole output: $(short "$log"))"

step image env SC_TIME="${SC_TIME:-$(dirname "$prereg")/sc-time}" \
  sh scripts/rootfs.sh "$image"
done_step image "$(sed -n 's/^rootfs.sh: image in //p' "$out")"

ts0=$(date +%s)
n=0
for s in "$sheet" studies/agent-sandbox/protocols/agent-sandbox.lua \
  studies/agent-sandbox-replication/protocols/agent-sandbox-replication.lua \
  studies/k8s-runtimes/protocols/k8s-runtimes.lua; do
  step check "$prereg" check "$s" --data "$data"
  n=$((n + 1))
done
dt=$(($(date +%s) - ts0))
done_step sheets "$n valid: sandbox-cost, agent-sandbox, its replication, k8s"

ts0=$(date +%s)
step register "$prereg" register "$first" --data "$data"
# Amended as it was, one amendment at a time: through the versions the
# committed experiment froze, then the sheet itself if it is newer.
nv=0
for v in $(ls "$versions" |
  sed -n 's/^v\([1-9][0-9]*\)\.lua$/\1/p' | sort -n); do
  step amend "$prereg" amend "$versions/v$v.lua" \
    --data "$data"
  nv=$v
done
if ! cmp -s "$versions/v$nv.lua" "$sheet"; then
  step amend "$prereg" amend "$sheet" --data "$data"
  nv=$((nv + 1))
fi
dt=$(($(date +%s) - ts0))
done_step register "v0 registered, then amended to v$nv, one amendment at a time"

# Progress: one line rewritten in place on a terminal, else into the log.
ts=$(date +%s)
printf '\n== run\n' >> "$log"
if [ -t 2 ]; then
  "$prereg" run "$sheet" --quick --data "$data" ${only:+--only "$only"} \
    > "$out" 2>/dev/tty
else
  "$prereg" run "$sheet" --quick --data "$data" ${only:+--only "$only"} \
    > "$out" 2>> "$log"
fi
rc=$?
cat "$out" >> "$log"
dt=$(($(date +%s) - ts))
if [ $rc -ne 0 ]; then
  printf '  %-9s FAILED (exit %d)\n' run "$rc"
  tail -n 8 "$log" | sed 's/^/    | /'
  echo "demo: could not run $sheet; the whole output is in $(short "$log")" >&2
  exit 1
fi
done_step run "$(sed -n 's/^batch b[0-9]*: //p' "$out" | sed 's/ (quick.*//'), quick"

step report "$prereg" report "$sheet" --data "$data"
plots=$(grep -c '\.svg$' "$out")
done_step report "report.md, report.html, report.xlsx and $plots plots"

step verify "$prereg" verify "$sheet" --data "$data"
# Its verdict on the files ("ok: N files, chain of K versions"); the
# status line it ends with heads the results below.
verdict=$(grep '^ok: ' "$out" | tail -n 1)
[ -n "$verdict" ] || verdict=$(tail -n 1 "$out")
done_step verify "$verdict"

step analyze "$prereg" analyze "$sheet" --data "$data"
# The analysis as prereg prints it (the status line first, then, fitted
# to the terminal, arms across, workloads down, each cell a median and
# each arm's ratio, CI and verdict), then the hypotheses in one line; the
# report has the rest, the method sentence under the status line too.
echo
awk '
  NR == 1 && /^status: / { print; method = 1; next }
  method && /^$/ { method = 0 }
  method { next }
  /^Hypotheses$/ { hyp = 1; next }
  /^Not counted/ { hyp = 0; done = 1 }
  hyp && /^  H[0-9]/ {
    v = $2 ($2 == "not" ? " held" : ""); sub(/:$/, "", v); h = h ", " $1 " " v
    next
  }
  !hyp && !done { print; if (/ × | ×|×/) ratios++ }
  END {
    if (!ratios) exit 1
    if (h != "") print "Hypotheses: " substr(h, 3)
  }' "$out" || {
  echo "demo: the analysis compared no arm: it counted none of the runs" >&2
  exit 1
}

html="$data/sandbox-cost/report/report.html"
[ -f "$html" ] || { echo "demo: no report at $html" >&2; exit 1; }
rm -f "$out"
echo
echo "Report: $(short "$html")"
echo "Done in $(($(date +%s) - t0)) s."
