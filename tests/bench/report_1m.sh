#!/bin/bash
# report_1m.sh: prereg report over 1,000,000 raw rows (an imported CSV of
# three arms): wall time and peak memory as ratios to the targets (10 s and
# 150 MB; at most 1.0 each). Not run by ctest.
#   PREREG=build/prereg bash tests/bench/report_1m.sh [ROWS]
set -eu
: "${PREREG:?set PREREG to the built binary}"
PREREG=$(readlink -f "$PREREG")
ROWS=${1:-1000000}
W=$(mktemp -d)
trap 'chmod -R u+w "$W"; rm -rf "$W"' EXIT
cd "$W"
mkdir protocols
cat >protocols/big.lua <<'LUA'
protocol {
  id = "big", title = "A million rows", question = "Is report fast?",
  author = "bench",
  arms = { { name = "bare", reference = true }, { name = "bwrap" },
           { name = "runc" } },
  workloads = { { name = "imported", metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 10000,
           seed = 17,
           verdicts = { { "slower", ci_excludes = 1, ratio_above = 1.10 } } },
}
LUA
python3 - "$ROWS" <<'PY'
import random, sys
n = int(sys.argv[1]); r = random.Random(1)
arms = [("bare", 1.0), ("bwrap", 3.4), ("runc", 1.2)]
with open("big.csv", "w") as f:
    f.write("workload,arm,metric,value,run,started_at\n")
    for i in range(n):
        a, m = arms[i % 3]
        f.write("imported,%s,wall_s,%.6f,%d,2026-10-21T08:00:00Z\n"
                % (a, m * r.lognormvariate(0, 0.1), i // 3 + 1))
PY
"$PREREG" register protocols/big.lua --data d >/dev/null
"$PREREG" import protocols/big.lua big.csv --data d >/dev/null
/usr/bin/time -v -o time.txt "$PREREG" report protocols/big.lua --data d >/dev/null
wall=$(awk -F': ' '/Elapsed \(wall clock\)/{print $2}' time.txt)
kib=$(awk -F': ' '/Maximum resident set size/{print $2}' time.txt)
secs=$(python3 -c "import sys;p=sys.argv[1].split(':');print(sum(float(x)*60**i for i,x in enumerate(reversed(p))))" "$wall")
mb=$(python3 -c "print(round($kib/1024, 1))")
echo "rows: $ROWS"
echo "report wall time: ${secs} s (target 10 s): ratio $(python3 -c "print(round($secs/10,3))")"
echo "report peak RSS: ${mb} MiB (target 150 MB): ratio $(python3 -c "print(round($kib*1024/150e6,3))")"
ls -l d/big/report/
