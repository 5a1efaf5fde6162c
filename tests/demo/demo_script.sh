#!/usr/bin/env bash
# demo_script.sh: scripts/demo.sh (what make demo shows), on one workload:
# a screenful that ends with the results and the report's path, the whole
# output of every command in its log, and a failing step named with the
# end of its output and exit status 1.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}" "${SRC:?}" "${BUILD:?}"

T=$(mktemp -d /tmp/prereg-demo-script-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
export PREREG_DEMO_DATA=$T/demo

expect 0 "demo on startup" sh "$SRC/scripts/demo.sh" "$PREREG" startup
screen=$out
# A screenful: the lines around the results are few, and the results
# fold into at most a block an arm. How many blocks follows the widths of
# the measured figures (a loaded machine's seconds are wider than ms).
lines=$(wc -l <<<"$screen")
matrix=$(sed -n '/^status:/,/^No data yet:/p' <<<"$screen" | sed '1d;$d')
others=$((lines - $(wc -l <<<"$matrix")))
check "a screenful around the results: $others lines" [ "$others" -le 20 ]
blocks=$(grep -c '^startup · wall_s' <<<"$matrix")
check "the results in 1 to 4 blocks ($blocks)" [ "$blocks" -ge 1 -a "$blocks" -le 4 ]
for s in image sheets register run report verify; do
  check_grep "a line for $s" "^  $s +[^ ].* [0-9]+ s$" "$screen"
done
check_grep "run: the quick runs of the four arms, 5 rounds (the fewest a 95% interval needs)" "^  run +20 runs, 20 valid, 0 invalid, quick" "$screen"
check_grep "results: the arms' header" "^ +bare +bwrap( +runc( +gvisor)?)?$" "$screen"
check_grep "results: gVisor has a column" "^ +(bare +bwrap +)?(runc +)?gvisor$" "$screen"
# A verdict under each sandbox: the reference cell, then one ratio, CI
# and verdict per other arm (bwrap, runc, gvisor), however the matrix
# is folded to the terminal.
n=$(grep -Eo '[0-9.]+× \[[0-9.]+, [0-9.]+\] [a-z]+' <<<"$screen" | wc -l)
check "results: a ratio and a verdict for bwrap, runc and gvisor ($n)" [ "$n" -eq 3 ]
# Real runs: their unit (ms or s) follows how fast this machine is.
check_grep "results: startup's medians" "^startup · wall_s +[0-9.]+ m?s .*[0-9.]+ m?s" "$screen"
check_grep "results: startup's ratio and verdict" "^ +reference, n=[0-9]+ +[0-9.]+× \[[0-9.]+, [0-9.]+\] [a-z]+" "$screen"
check_grep "results: hypotheses" "^Hypotheses: H1 [a-z ]+, H2 [a-z ]+, H3 [a-z ]+$" "$screen"
check_grep "ends with the report's path" "Report: $T/demo/sandbox-cost/report/report.html"$'\n'"Done in [0-9]+ s\.$" "$(tail -n 2 <<<"$screen")"
check "the report is there" test -s "$T/demo/sandbox-cost/report/report.html"
check "no sheet dumped on the screen" [ -z "$(grep -E '^Sheet +[a-z]|^Arms \(' <<<"$screen")" ]
check "no YAML on the screen" [ -z "$(grep -E 'apiVersion|kind: ' <<<"$screen")" ]
log=$T/demo.log
check "the log holds the summaries" grep -q '^Sheet      studies/k8s-runtimes/protocols/k8s-runtimes.lua' "$log"
check "the log holds the amendment's diff" grep -q '^+++ versions/v1.lua' "$log"
check "the log holds the analysis" grep -q '^startup · wall_s' "$log"

# A step that fails is named, with the end of its output; exit 1.
cat > "$T/failing" <<SH
#!/bin/sh
[ "\$1" = amend ] && { echo "amend: the disk is on fire" >&2; exit 1; }
exec "$PREREG" "\$@"
SH
chmod +x "$T/failing"
SC_TIME=$BUILD/sc-time expect 1 "a failing step ends the demo" \
  sh "$SRC/scripts/demo.sh" "$T/failing" startup
check_grep "the step is named" "^  amend +FAILED \(exit 1\): $T/failing amend" "$out"
check_grep "with its output" "    \| amend: the disk is on fire" "$out"
check_grep "and where the log is" "demo: could not amend; the whole output is in $T/demo.log" "$out"
check "no results after a failure" [ -z "$(grep -E '^Results|^Report:' <<<"$out")" ]
done_testing 25
