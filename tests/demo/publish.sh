#!/usr/bin/env bash
# publish.sh: the project's own published example (the data folder of
# studies/sandbox-cost) goes through publish -> verify -> report from the
# bundle alone, and the re-rendered report equals the committed one byte for byte; the analysis
# from the bundle equals the analysis from the checkout; one changed byte
# in the bundle is caught.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}" "${SRC:?}"
T=$(mktemp -d)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
ex="$SRC/studies/sandbox-cost/data/sandbox-cost"
sheet="$SRC/studies/sandbox-cost/protocols/sandbox-cost.lua"
# A copy, so that nothing is written into the checkout.
mkdir "$T/data" && cp -a "$ex" "$T/data/" && rm -rf "$T/data/sandbox-cost/report"
check "verify the committed example" quiet "$PREREG" verify "$sheet" --data "$T/data"
check "publish it" quiet "$PREREG" publish "$sheet" --data "$T/data" \
  --out "$T/sandbox-cost.tar.gz"
check "publish again: same bytes" quiet bash -c "
  '$PREREG' publish '$sheet' --data '$T/data' --out '$T/again.tar.gz' &&
  cmp '$T/sandbox-cost.tar.gz' '$T/again.tar.gz'"
check "verify the bundle" quiet "$PREREG" verify "$T/sandbox-cost.tar.gz"
check "report from the bundle alone" quiet "$PREREG" report "$T/sandbox-cost.tar.gz" \
  --out "$T/rerendered"
for f in "$ex"/report/report.md "$ex"/report/report.html "$ex"/report/*.svg \
         "$ex"/report/provenance.md "$ex"/report/report.xlsx; do
  b=$(basename "$f")
  check "re-rendered $b equals the committed one" quiet cmp "$f" "$T/rerendered/$b"
done
check "analysis from the bundle equals the checkout's" quiet bash -c "
  '$PREREG' analyze '$T/sandbox-cost.tar.gz' --json > '$T/a1.json' &&
  '$PREREG' analyze '$sheet' --data '$T/data' --json > '$T/a2.json' &&
  cmp '$T/a1.json' '$T/a2.json'"
# One byte of a member changed (inside the compressed stream): caught.
python3 - "$T/sandbox-cost.tar.gz" "$T/tampered.tar.gz" <<'PY'
import gzip, sys
raw = bytearray(gzip.decompress(open(sys.argv[1], "rb").read()))
i = raw.find(b",run,startup,bare,")  # a byte of a batch's rows
assert i > 0
raw[i + len(",run,startup,")] = ord("B")
open(sys.argv[2], "wb").write(gzip.compress(bytes(raw), mtime=0))
PY
check "a changed byte is caught and named" quiet bash -c "
  ! '$PREREG' verify '$T/tampered.tar.gz' > '$T/v.txt' 2>&1 &&
  grep -q 'batches/b000' '$T/v.txt'"
done_testing 17
