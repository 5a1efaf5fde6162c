#!/bin/sh
# regen-goldens.sh [PREREG]: write every committed golden file anew with
# the prereg given (default build/prereg), after a change that is meant to
# show: the committed studies' reports (studies/*/data/*/report, checked
# byte for byte by example_golden, demo_container_runtimes and
# demo_replication) and the sheet loader's expected messages
# (tests/protocols/good and bad, checked by proto_golden). It changes
# files in the checkout only: read every line of `git diff` before
# committing, since a golden is what the tests hold the program to.
# SPDX-License-Identifier: MIT
set -eu
cd "$(dirname "$0")/.."
prereg=$(realpath "${1:-build/prereg}")
[ -x "$prereg" ] || {
  echo "regen-goldens.sh: no prereg at $prereg; build first (make build)" >&2
  exit 2
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The sheet of a study's data folder: protocols/ID.lua beside data/.
for report in studies/*/data/*/report; do
  [ -d "$report" ] || continue
  study=${report%/data/*}
  id=$(basename "$(dirname "$report")")
  sheet="$study/protocols/$id.lua"
  [ -f "$sheet" ] || {
    echo "regen-goldens.sh: $report: no sheet $sheet" >&2
    exit 1
  }
  rm -rf "$tmp/out"
  "$prereg" report "$sheet" --data "$study/data" --out "$tmp/out" >/dev/null
  rm -f "$report"/*
  cp "$tmp/out"/* "$report"/
  echo "regen-goldens.sh: $report"
done

# The loader's messages: make_bad.py writes bad/*.lua, then each sheet's
# check output is its .expected (stderr for bad/, stdout for good/).
(
  cd tests/protocols
  python3 make_bad.py
  for sheet in bad/*.lua; do
    "$prereg" check "$sheet" --data "$tmp/data" 2>"${sheet%.lua}.expected" >/dev/null &&
      { echo "regen-goldens.sh: $sheet passed check; a bad sheet must not" >&2; exit 1; }
  done
  for sheet in good/*.lua; do
    "$prereg" check "$sheet" --data "$tmp/data" >"${sheet%.lua}.expected"
  done
)
echo "regen-goldens.sh: tests/protocols/good and bad"
git status --short -- studies tests/protocols
