#!/usr/bin/env bash
# import_runs.sh: a CSV without a run column, one metric a line: the k-th
# value of a workload, arm and metric belongs to the k-th run of that
# workload and arm, so a run's metrics stay one run (10 runs of two
# metrics count as 10 runs, each metric analysed at n=10), and a metric
# with one value more than the others starts a run of its own. Control: a
# run column pairs the same lines as it says.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
T=$(mktemp -d)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1

cat >w.lua <<'LUA'
protocol {
  id = "w", title = "W", question = "q", author = "t",
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { { name = "w", runs = 10, metrics = { "wall_s", "maxrss_kib" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 2000,
           seed = 1, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
# rows.py EXTRA RUNCOL: 10 runs per arm, wall_s and maxrss_kib on lines of
# their own (maxrss first for arm b: the order within a run is free),
# EXTRA more wall_s lines for arm a.
cat >rows.py <<'PY'
import sys
extra, runcol = int(sys.argv[1]), sys.argv[2] == "1"
print("workload,arm,metric,value" + (",run" if runcol else ""))
for i in range(10):
    for arm, k in (("a", 1), ("b", 2)):
        ms = [("wall_s", k * (1 + i / 100)), ("maxrss_kib", k * (1000 + 7 * i))]
        if arm == "b":
            ms.reverse()
        for m, v in ms:
            print("w,%s,%s,%.4f" % (arm, m, v) + (",%d" % (i + 1) if runcol else ""))
for j in range(extra):
    print("w,a,wall_s,%.4f" % (1.5 + j / 100) + (",%d" % (11 + j) if runcol else ""))
PY
counted() { # DIR: "a b" counted runs and the n of each result, from --json
  "$PREREG" analyze w.lua --data "$1" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sorted({(r["metric"], r["arm"], r["n"]) for r in d["results"]} |
             {(r["metric"], r["reference"], r["n_reference"]) for r in d["results"]}))'
}
for runcol in 0 1; do
  python3 rows.py 0 $runcol >rows$runcol.csv
  python3 rows.py 1 $runcol >extra$runcol.csv
  for f in rows extra; do
    check "register ($f, run column $runcol)" quiet "$PREREG" register w.lua --data d$f$runcol
    check "import ($f, run column $runcol)" quiet "$PREREG" import w.lua $f$runcol.csv --data d$f$runcol
  done
  st=$("$PREREG" status w.lua --data drows$runcol)
  check "run column $runcol: 10 runs counted per arm, none beyond: $st" \
    sh -c 'printf "%s\n" "$1" | grep -Eq "^ +w +a +10 +10 +0 +0 +0$" &&
           printf "%s\n" "$1" | grep -Eq "^ +w +b +10 +10 +0 +0 +0$"' - "$st"
  got=$(counted drows$runcol)
  check "run column $runcol: every metric analysed at n=10: $got" \
    [ "$got" = "[('maxrss_kib', 'a', 10), ('maxrss_kib', 'b', 10), ('wall_s', 'a', 10), ('wall_s', 'b', 10)]" ]
  st=$("$PREREG" status w.lua --data dextra$runcol)
  check "run column $runcol: an eleventh wall_s of arm a is a run beyond the plan: $st" \
    sh -c 'printf "%s\n" "$1" | grep -Eq "^ +w +a +10 +10 +0 +0 +1$"' - "$st"
done
check "the two files' analyses agree" [ "$(counted drows0)" = "$(counted drows1)" ]
done_testing 15
