#!/usr/bin/env bash
# plan_truth.sh: whether prereg plan's recommendations from 5-value
# pilots reach the power they promise on distributions whose truth is
# known (see plan_truth.py). Not a ctest: minutes of CPU, and its
# figures are read, not asserted.
# Usage: tests/bench/plan_truth.sh [BUILD_DIR] [PILOTS (30)] [K (1000)]
# SPDX-License-Identifier: MIT
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(realpath "${1:-$SRC/build}")
[ -x "$BUILD/prereg" ] || { echo "bench: $BUILD/prereg is not built" >&2; exit 1; }
/usr/bin/python3 -c 'import numpy' 2>/dev/null || {
  echo "bench: python3-numpy is missing: sh scripts/deps.sh test" >&2
  exit 1
}
T=$(mktemp -d /tmp/prereg-bench-truth-XXXXXX)
trap 'chmod -R u+w "$T"; rm -rf "$T"' EXIT
/usr/bin/python3 "$SRC/tests/bench/plan_truth.py" "$BUILD/prereg" "$T" \
  "${2:-30}" "${3:-1000}"
