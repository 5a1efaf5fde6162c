#!/usr/bin/env bash
# bootstrap_vs_scipy.sh: prereg's bootstrap against scipy.stats.bootstrap
# doing the same work. Not a ctest (timings). Prints:
#   1. 18 comparisons (10-30 values per arm) at 10,000 resamples: the time
#      of prereg analyze --json on a sheet with exactly those comparisons
#      (the whole command: sheet, CSV, bootstrap, JSON), of the bootstrap
#      alone through the test driver boot_ci, and of SciPy (percentile,
#      paired=False, vectorized), and the ratios (target: SciPy/prereg >= 10).
#   2. Two arms of 100,000 values each at 10,000 resamples on every core:
#      the wall time (target < 10 s).
# Usage: tests/bench/bootstrap_vs_scipy.sh [BUILD_DIR]   (default: build)
# SPDX-License-Identifier: MIT
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(realpath "${1:-$SRC/build}")
for f in "$BUILD/prereg" "$BUILD/tests/analysis/boot_ci"; do
  [ -x "$f" ] || { echo "bench: $f is not built (make build)" >&2; exit 1; }
done
/usr/bin/python3 -c 'import scipy' 2>/dev/null || {
  echo "bench: python3-scipy is missing: sh scripts/deps.sh test" >&2
  exit 1
}
T=$(mktemp -d /tmp/prereg-bench-boot-XXXXXX)
trap 'chmod -R u+w "$T"; rm -rf "$T"' EXIT
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
echo "machine: $(nproc) cores, $cpu"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 "$SRC/tests/bench/bootstrap_vs_scipy.py" "$BUILD/prereg" \
  "$BUILD/tests/analysis/boot_ci" "$T"
