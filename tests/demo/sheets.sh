#!/bin/bash
# sheets.sh: the committed studies' sheets (studies/*/protocols/*.lua)
# through the real CLI:
# each passes `prereg check`; sandbox-cost's and the replication's replay
# steps are the committed log, line for line; each chain registers its
# first version and `prereg amend` accepts every amendment in turn; the
# replication's plan names its containers by experiment and run; the
# published experiment and the Kubernetes one refuse to run where their
# runtimes are missing, naming what is missing, and write no data.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/lib.sh"
: "${PREREG:?PREREG must name the prereg binary}"
# sheet NAME: the study NAME's sheet; versions NAME: its frozen versions.
sheet() { echo "$SRC/studies/$1/protocols/$1.lua"; }
versions() { echo "$SRC/studies/$1/data/$1/versions"; }
replay="$SRC/studies/sandbox-cost/protocols/sandbox-cost/replay.txt"
cd "$tmp" || exit 1

for s in sandbox-cost agent-sandbox agent-sandbox-replication k8s-runtimes; do
  "$PREREG" check "$(sheet "$s")" > "$tmp/$s.check" 2>&1
  rc=$?
  check "check $s.lua exits 0 (got $rc: $(head -c 300 "$tmp/$s.check"))" test $rc -eq 0
done
check "the summary names sandbox-cost's four arms" \
  sh -c "grep -q '^Arms (4, in report order)' '$tmp/sandbox-cost.check' &&
    grep -q '^  bwrap ' '$tmp/sandbox-cost.check' && grep -q '^  runc ' '$tmp/sandbox-cost.check' &&
    grep -q '^  gvisor ' '$tmp/sandbox-cost.check'"
check "the summary names the published experiment's arms" \
  sh -c "grep -q gvisor '$tmp/agent-sandbox.check' && grep -q kata-clh '$tmp/agent-sandbox.check'"
"$PREREG" check "$(versions sandbox-cost)/v0.lua" > /dev/null 2>&1
rc=$?
check "the first version of sandbox-cost passes check" test $rc -eq 0

# The steps between the markers, unquoted, equal replay.txt.
for s in sandbox-cost agent-sandbox-replication; do
  sed -n '/-- replay.txt begins/,/-- replay.txt ends/p' "$(sheet "$s")" |
    sed -e '1d' -e '$d' |
    sed -E -e 's/^ *//' -e 's/,$//' -e 's/^"(.*)"$/\1/' -e 's/^\[\[(.*)\]\]$/\1/' \
    > "$tmp/steps-$s.txt"
  check "$s's replay steps are replay.txt, line for line" \
    cmp "$tmp/steps-$s.txt" "$replay"
done
check "the replication's summary lists the published ratios" \
  grep -q "^Published ratios to compare with (6)" "$tmp/agent-sandbox-replication.check"
check "the replication runs two arms, runc and gvisor (Kata is dropped)" \
  sh -c "grep -q '^Arms (2, in report order)' '$tmp/agent-sandbox-replication.check' &&
    grep -q '^  gvisor ' '$tmp/agent-sandbox-replication.check'"

# The real flow: register the first version, amend one amendment at a
# time (the committed amendments' versions, then the sheet).
d="$tmp/data"
"$PREREG" register "$(versions sandbox-cost)/v0.lua" --data "$d" > "$tmp/reg.out" 2>&1
rc=$?
check "register the first version of sandbox-cost ($(cat "$tmp/reg.out"))" test $rc -eq 0
"$PREREG" amend "$(versions sandbox-cost)/v1.lua" --data "$d" \
  > "$tmp/amend1.out" 2>&1
rc=$?
check "amend it with its first amendment ($(head -n 2 "$tmp/amend1.out"))" test $rc -eq 0
check "the amendment's diff holds the new idle-memory command" \
  sh -c "cat '$d'/sandbox-cost/versions/v1.diff | grep -q 'trap'"
"$PREREG" amend "$(versions sandbox-cost)/v2.lua" --data "$d" \
  > "$tmp/amend2.out" 2>&1
rc=$?
check "then with its second ($(head -n 2 "$tmp/amend2.out"))" test $rc -eq 0
check "whose diff names the memory word" \
  sh -c "cat '$d'/sandbox-cost/versions/v2.diff | grep -q 'more memory'"
"$PREREG" amend "$(sheet sandbox-cost)" --data "$d" > "$tmp/amend.out" 2>&1
rc=$?
check "then with the sheet ($(head -n 2 "$tmp/amend.out"))" test $rc -eq 0
check "the third amendment's diff adds the gvisor arm" \
  grep -q '^+    { name = "gvisor", run = "{sc}/launch-gvisor {cmd}"' "$d/sandbox-cost/versions/v3.diff"
check "status: the sheet is the fourth version" \
  sh -c "'$PREREG' status '$(sheet sandbox-cost)' --data '$d' | grep -q 'matches v3'"

# The replication's chain: the published design registered, then its
# three amendments in turn.
r="$tmp/rdata"
R=$(versions agent-sandbox-replication)
rs=$(sheet agent-sandbox-replication)
expect 0 "register the replication's first version (the published design)" \
  "$PREREG" register "$R/v0.lua" --data "$r"
for v in "$R/v1.lua" "$R/v2.lua" "$rs"; do
  expect 0 "amend it with $(basename "$v")" "$PREREG" amend "$v" --data "$r"
done
expect 0 "its status" "$PREREG" status "$rs" --data "$r"
check_grep "the sheet is the fourth version" "matches v3" "$out"
expect 0 "its plan" "$PREREG" run "$rs" --data "$r" --dry-run
check_grep "containers are named by experiment and run, their ID to the run's cidfile" \
  "--name prereg-agent-sandbox-replication-bNEXT-0001 --cidfile BATCH_FOLDER/bNEXT-0001.cid" "$out"
check_grep "cgroup parents too" "--cgroup-parent /prereg/agent-sandbox-replication/bNEXT-0001 " "$out"

# Runs refused where the runtimes are missing: naming them, writing nothing.
refuses() { # refuses SHEET PATTERN
  "$PREREG" register "$(sheet "$1")" --data "$d" > "$tmp/$1.reg" 2>&1 ||
    { bad "register $1: $(cat "$tmp/$1.reg")"; return; }
  "$PREREG" run "$(sheet "$1")" --data "$d" > "$tmp/$1.run" 2>&1
  rc=$?
  check "run $1 refuses (exit $rc): $(head -c 300 "$tmp/$1.run")" test $rc -ne 0
  check "the refusal names what is missing ($2)" grep -Eq "$2" "$tmp/$1.run"
  check "no rows were written for $1" \
    test -z "$(find "$d/$1" -name '*.csv' -size +0 2>/dev/null)"
}
if command -v docker > /dev/null && docker info > /dev/null 2>&1 &&
  command -v runsc > /dev/null && command -v kata-runtime > /dev/null; then
  bad "Docker, gVisor and Kata are all here: this test expects a machine without them"
else
  refuses agent-sandbox 'docker|runsc|kata-runtime|cloud-hypervisor'
fi
if command -v kubectl > /dev/null && kubectl cluster-info > /dev/null 2>&1; then
  bad "kubectl reaches a cluster here: this test expects a machine without one"
else
  refuses k8s-runtimes 'kubectl'
fi
done_testing 30
