#!/usr/bin/env bash
# plan_vs_numpy.sh: prereg plan against the same simulation in NumPy on
# one comparison (see plan_vs_numpy.py), and the whole committed
# sandbox-cost sheet planned from its data (seven sizes, 1000 simulated
# experiments each, 10,000 resamples). Not a ctest (timings). Prints the
# times and the ratio (target: NumPy / prereg >= 2).
# Usage: tests/bench/plan_vs_numpy.sh [BUILD_DIR] [SIMS (20)] [PASSES (3)]
# SPDX-License-Identifier: MIT
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(realpath "${1:-$SRC/build}")
[ -x "$BUILD/prereg" ] || { echo "bench: $BUILD/prereg is not built" >&2; exit 1; }
/usr/bin/python3 -c 'import numpy' 2>/dev/null || {
  echo "bench: python3-numpy is missing: sh scripts/deps.sh test" >&2
  exit 1
}
T=$(mktemp -d /tmp/prereg-bench-plan-XXXXXX)
trap 'chmod -R u+w "$T"; rm -rf "$T"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 "$SRC/tests/bench/plan_vs_numpy.py" "$BUILD/prereg" "$T" \
  "${2:-20}" "${3:-3}"
sheet=$SRC/protocols/sandbox-cost.lua data=$SRC/data/sandbox-cost
[ -f "$sheet" ] || sheet=$SRC/studies/sandbox-cost/protocols/sandbox-cost.lua
[ -d "$data" ] || data=$SRC/studies/sandbox-cost/data/sandbox-cost
start=$(date +%s.%N)
"$BUILD/prereg" plan "$sheet" --pilot "$data" >"$T/sc.txt"
end=$(date +%s.%N)
echo "sandbox-cost, every comparison ($(grep -c ' / .* / ' "$T/sc.txt")), 7 sizes, 1000 simulated experiments each: $(echo "$end - $start" | bc) s wall"
