#!/usr/bin/env bash
# slurm_overhead.sh: wall_s of /bin/true measured through the Slurm
# backend (a step per round on a node of a private loopback cluster, the
# node runner timing each run on the node) against the same sheet run
# here, in alternating passes so that neither gets a quieter stretch of
# the machine. Prints each pass's medians, both overall medians and their
# ratio: srun's ~25-45 ms per step must not enter a figure, so the ratio
# should be 1 within the passes' own spread. Root; not a ctest.
# Usage: tests/bench/slurm_overhead.sh [PREREG] [RUNS_PER_PASS] [PASSES]
# SPDX-License-Identifier: MIT
set -eu
PREREG=$(realpath "${1:-${PREREG:-build/prereg}}")
RUNS=${2:-200}
PASSES=${3:-4}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
for v in $(env | sed -n 's/^\(SLURM[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
T=$(mktemp -d /tmp/prereg-slurm-bench-XXXXXX)
chmod a+x "$T"
trap '"$SRC/scripts/slurm/stop.sh" "$T/cluster" >/dev/null 2>&1; chmod -R u+w "$T"; rm -rf "$T"' EXIT
eval "$("$SRC/scripts/slurm/start.sh" "$T/cluster" 1)"
export SLURM_CONF
cd "$T"
sheet() { # sheet ID HOSTS
  cat <<LUA
protocol {
  id = "$1", title = "srun overhead", question = "q", author = "bench",
  arms = { { name = "bare", reference = true }, { name = "again" } },
  workloads = { { name = "true", runs = $((RUNS / 2)), warmup = 3,
                  cmd = "/bin/true", metrics = { "wall_s" } } },
  rule = { seed = 1, resamples = 1000,
           verdicts = { { "tie", ci_within = { 0.9, 1.1 } } } },
  $2
}
LUA
}
sheet local "" > local.lua
sheet slurm 'hosts = { backend = "slurm", nodes = { "n1" }, min_completed = 1,
           min_hosts = 2, across = { max_spread = 1.1 } },' > slurm.lua
for pass in $(seq "$PASSES"); do
  # Which goes first alternates too.
  order="local slurm"
  [ $((pass % 2)) = 0 ] && order="slurm local"
  for kind in $order; do
    "$PREREG" register "$kind.lua" --data "d$pass" >/dev/null
    s=$EPOCHREALTIME
    "$PREREG" run "$kind.lua" --data "d$pass" >/dev/null 2>&1
    echo "$kind $pass $s $EPOCHREALTIME" >> took
  done
done
python3 - "$PASSES" <<'PY'
import csv, glob, statistics, sys
passes = int(sys.argv[1])
def walls(kind, p="*"):
    return [float(r["value"]) for f in glob.glob(f"d{p}/{kind}/batches/b*.csv")
            for r in csv.DictReader(open(f)) if r["metric"] == "wall_s"]
took = {}
for line in open("took"):
    k, p, a, b = line.split()
    took[(k, p)] = float(b) - float(a)
ratios = []
for p in range(1, passes + 1):
    ml, ms = statistics.median(walls("local", p)), statistics.median(walls("slurm", p))
    ratios.append(ms / ml)
    print(f"pass {p}: local {ml * 1e3:.3f} ms, slurm {ms * 1e3:.3f} ms, ratio {ms / ml:.3f}"
          f"  (batch took {took[('local', str(p))]:.1f} s here, {took[('slurm', str(p))]:.1f} s on Slurm)")
wl, ws = walls("local"), walls("slurm")
ml, ms = statistics.median(wl), statistics.median(ws)
print(f"local: {len(wl)} runs, median wall_s {ml * 1e3:.3f} ms")
print(f"slurm: {len(ws)} runs, median wall_s {ms * 1e3:.3f} ms")
print(f"ratio slurm/local: {ms / ml:.3f} (passes {min(ratios):.3f}-{max(ratios):.3f})")
# A step's first run against its second: a fresh node runner per round.
for kind in ("local", "slurm"):
    pos = [[], []]
    for f in glob.glob(f"d*/{kind}/batches/b*.csv"):
        for r in csv.DictReader(open(f)):
            pos[(int(r["seq"]) - 1) % 2].append(float(r["value"]))
    print(f"{kind}: first run of a round {statistics.median(pos[0]) * 1e3:.3f} ms, "
          f"second {statistics.median(pos[1]) * 1e3:.3f} ms")
PY
