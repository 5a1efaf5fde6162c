#!/usr/bin/env bash
# maxrss_vs_time.sh: the maxrss_kib prereg records against GNU time's %M
# for the same commands in the same minute: `dash -c true` and /bin/true,
# RUNS runs each (default 40), in 4 passes that alternate prereg and
# /usr/bin/time. Prints each median and the ratio prereg/time (the goal:
# within 10%, 0.90 to 1.10). Not a ctest.
# Usage: tests/bench/maxrss_vs_time.sh [PREREG] [RUNS]
# SPDX-License-Identifier: MIT
set -eu
PREREG=${1:-${PREREG:-build/prereg}}
RUNS=${2:-40}
PREREG=$(realpath "$PREREG")
[ -x /usr/bin/time ] || { echo "GNU time (/usr/bin/time) is not installed" >&2; exit 1; }
T=$(mktemp -d /tmp/prereg-bench-XXXXXX)
trap 'chmod -R u+w "$T"; rm -rf "$T"' EXIT
cd "$T"
cat > bench.lua <<LUA
protocol {
  id = "maxrss", title = "maxrss against GNU time", question = "q", author = "bench",
  arms = { { name = "dash", reference = true, run = "dash -c true" },
           { name = "true", run = "/bin/true" } },
  workloads = { { name = "start", runs = $((RUNS / 4)), metrics = { "maxrss_kib" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200,
           seed = 1, verdicts = { { "tie", ci_within = { 0.9, 1.1 } } } },
}
LUA
: >time.dash
: >time.true
for pass in 1 2 3 4; do
  rm -rf data
  "$PREREG" register bench.lua --data data >/dev/null
  "$PREREG" run bench.lua --data data >/dev/null 2>&1
  python3 - data >>prereg.tsv <<'PY'
import csv, glob, sys
for f in glob.glob(sys.argv[1] + "/maxrss/batches/*.csv"):
    for r in csv.DictReader(open(f)):
        if r["metric"] == "maxrss_kib" and r["valid"] == "1":
            print(r["arm"] + "\t" + r["value"])
PY
  for ((i = 0; i < RUNS / 4; i++)); do
    /usr/bin/time -f %M dash -c true 2>>time.dash
    /usr/bin/time -f %M /bin/true 2>>time.true
  done
done
python3 - <<'PY'
import statistics
pr = {"dash": [], "true": []}
for line in open("prereg.tsv"):
    arm, v = line.split("\t")
    pr[arm].append(float(v))
for arm, label in (("dash", "dash -c true"), ("true", "/bin/true")):
    gt = [float(x) for x in open("time." + arm) if x.strip()]
    a, b = statistics.median(pr[arm]), statistics.median(gt)
    print("%-13s prereg %6.0f KiB  GNU time %6.0f KiB  ratio %.2f  (n=%d, %d)"
          % (label, a, b, a / b, len(pr[arm]), len(gt)))
PY
