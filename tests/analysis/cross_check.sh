#!/bin/bash
# cross_check.sh: prereg's bootstrap against R boot and SciPy, the quantile
# step on the same replicates, and the documented stream layout (see
# cross_check.py for the tolerances and why). Each line cross_check.py
# prints as "ok" or "FAIL" is one check here.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
BOOT_CI="$BUILD/tests/analysis/boot_ci"
for tool in /usr/bin/python3 Rscript; do
  command -v "$tool" >/dev/null || {
    bad "$tool is missing; run: sh scripts/deps.sh test"; done_testing; }
done
[ -x "$BOOT_CI" ] || { bad "$BOOT_CI not built"; done_testing; }
work=$(mktemp -d)
on_exit 'rm -rf "$work"'
/usr/bin/python3 "$SRC/tests/analysis/cross_check.py" "$BOOT_CI" "$work" \
  >"$work/out.txt" 2>&1
rc=$?
cat "$work/out.txt"
while IFS= read -r line; do
  case $line in
    "ok    "*) ok ;;
    "FAIL  "*) bad "${line#FAIL  }" ;;
  esac
done <"$work/out.txt"
check "cross_check.py exits 0 (exit $rc)" test $rc -eq 0
done_testing 85
