#!/bin/bash
# cross_check.sh: prereg's bootstrap against R boot and SciPy, the quantile
# step on the same replicates, and the documented stream layout (see
# cross_check.py for the tolerances and why).
# SPDX-License-Identifier: MIT
set -u
BOOT_CI="$BUILD/tests/analysis/boot_ci"
for tool in /usr/bin/python3 Rscript; do
  command -v "$tool" >/dev/null || {
    echo "cross_check: $tool is missing; run: sh scripts/deps.sh test" >&2
    echo "0 passed, 1 failed"; exit 1; }
done
[ -x "$BOOT_CI" ] || { echo "cross_check: $BOOT_CI not built" >&2;
  echo "0 passed, 1 failed"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$SRC/tests/analysis/cross_check.py" "$BOOT_CI" "$work"
