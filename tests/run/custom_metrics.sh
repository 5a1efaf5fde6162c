#!/usr/bin/env bash
# custom_metrics.sh: the worked example of custom metrics in
# docs/interface.md, run as written: `cleanup` runs in the run's folder
# after the timed command and reports the size of what the command wrote
# there through $PREREG_METRICS; the folder is gone after the run, the
# metrics file is kept; a value with a unit after it makes the run invalid.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}" "${SRC:?}"

T=$(mktemp -d /tmp/prereg-metrics-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T"
python3 - "$SRC/docs/interface.md" <<'PY' || bad "the example is in the docs"
import re, sys
t = open(sys.argv[1]).read()
i = t.index("**Custom metrics, a worked example.**")
open("sizes.lua", "w").write(re.search(r"```lua\n(.*?)```", t[i:], re.S).group(1))
PY
expect 0 "the example checks" "$PREREG" check sizes.lua
"$PREREG" register sizes.lua >/dev/null || bad "register"
expect 0 "the example runs" "$PREREG" run sizes.lua
expect 0 "export" "$PREREG" export sizes.lua
want_gz=$(gzip -6 -c /etc/services | wc -c)
want_xz=$(xz -2 -c /etc/services | wc -c)
check "cleanup measured gzip's output in the run's folder" \
  [ "$(grep -c "^compress,gzip,out_bytes,$want_gz,B," <<<"$out")" -eq 10 ]
check "and xz's" \
  [ "$(grep -c "^compress,xz,out_bytes,$want_xz,B," <<<"$out")" -eq 10 ]
B=data/sizes/batches/b0001
check "the metrics file is kept" grep -qx "out_bytes=$want_gz" "$B/b0001-0001.metrics"
check "the run's folder is gone" [ -z "$(find "$B" -name '*.work')" ]
# A unit after the value: the run is invalid, its reason names the line.
sed -i 's/ >> \$PREREG_METRICS"/B >> $PREREG_METRICS"/' sizes.lua
"$PREREG" register sizes.lua --data bad >/dev/null || bad "register bad"
"$PREREG" run sizes.lua --data bad >/dev/null 2>&1
expect 0 "export --all of the bad values" "$PREREG" export sizes.lua --data bad --all
check_grep "a value with its unit makes the run invalid" \
  "^compress,gzip,out_bytes,,B,.*,invalid,.*metrics file line 1: 'out_bytes' is not a finite number" "$out"
done_testing 9
