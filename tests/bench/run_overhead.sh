#!/usr/bin/env bash
# run_overhead.sh: prereg's own overhead against hyperfine's, measured in
# the same minute: the median wall_s prereg records for /bin/true over
# RUNS runs (default 400, in 4 passes), and hyperfine -N's median over as
# many. Prints both medians and the ratio prereg/hyperfine (target:
# <= 1.25). Not a ctest.
# Usage: tests/bench/run_overhead.sh [PREREG] [RUNS]
# SPDX-License-Identifier: MIT
set -eu
PREREG=${1:-${PREREG:-build/prereg}}
RUNS=${2:-400}
PREREG=$(realpath "$PREREG")
command -v hyperfine >/dev/null || { echo "hyperfine is not installed" >&2; exit 1; }
T=$(mktemp -d /tmp/prereg-bench-XXXXXX)
trap 'chmod -R u+w "$T"; rm -rf "$T"' EXIT
cd "$T"
cat > bench.lua <<LUA
protocol {
  id = "overhead", title = "prereg overhead", question = "q", author = "bench",
  arms = { { name = "bare", reference = true }, { name = "again" } },
  workloads = { { name = "true", runs = $((RUNS / 8)), warmup = 3,
                  cmd = "/bin/true", metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 1000,
           seed = 1, verdicts = { { "tie", ci_within = { 0.9, 1.1 } } } },
}
LUA
# Alternate the two tools in four passes (each time RUNS/4 runs of
# /bin/true from each) so that neither gets a quieter stretch of the
# minute: on a shared machine one 200-run block can land in a busy second.
for pass in 1 2 3 4; do
  "$PREREG" register bench.lua --data "d$pass" >/dev/null
  "$PREREG" run bench.lua --data "d$pass" >/dev/null 2>&1
  hyperfine -N --runs "$((RUNS / 4))" --warmup 3 --export-json "h$pass.json" \
    /bin/true >/dev/null 2>&1
done
python3 - "d*/overhead/batches" h?.json <<'PY'
import csv, glob, json, statistics, sys
walls = [float(r["value"]) for f in glob.glob(sys.argv[1] + "/b*.csv")
         for r in csv.DictReader(open(f)) if r["metric"] == "wall_s"]
hf = []
for f in sys.argv[2:]:
    hf += json.load(open(f))["results"][0]["times"]
mp, mh = statistics.median(walls), statistics.median(hf)
print(f"prereg:    {len(walls)} runs, median wall_s {mp * 1e3:.3f} ms")
print(f"hyperfine: {len(hf)} runs, median {mh * 1e3:.3f} ms")
print(f"ratio prereg/hyperfine: {mp / mh:.3f} (target <= 1.25)")
PY
