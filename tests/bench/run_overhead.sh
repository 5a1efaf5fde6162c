#!/usr/bin/env bash
# run_overhead.sh: what prereg adds to /bin/true against hyperfine, both
# measured in the same minute. Each of PASSES passes (default 3) runs, one
# after the other, `prereg run` of 1,000 runs of /bin/true (two arms of
# 500 rounds, no warm-up) and `hyperfine -N --runs 1000 /bin/true`, each
# timed whole (bash's EPOCHREALTIME before and after, output to
# /dev/null); which goes first alternates from pass to pass, so that
# neither gets a quieter stretch of a shared machine. It prints every
# pass, then the two figures against their targets:
#   - the median wall_s prereg recorded (all passes' rows) against
#     hyperfine's median time (all passes' runs): target <= 1.02;
#   - the median over the passes of the whole time of the 1,000 runs,
#     prereg run against hyperfine: target <= 1.10.
# Also the machine's load average before and after, since both depend on
# it. Not a ctest (a benchmark never decides a test).
# Usage: tests/bench/run_overhead.sh [PREREG] [PASSES]
# SPDX-License-Identifier: MIT
set -eu
PREREG=${1:-${PREREG:-build/prereg}}
PASSES=${2:-3}
PREREG=$(realpath "$PREREG")
command -v hyperfine >/dev/null || { echo "hyperfine is not installed" >&2; exit 1; }
[ "$PASSES" -ge 1 ] || { echo "PASSES must be at least 1" >&2; exit 1; }
T=$(mktemp -d /tmp/prereg-overhead-XXXXXX)
trap 'chmod -R u+w "$T"; rm -rf "$T"' EXIT
cd "$T"
cat > overhead.lua <<'LUA'
protocol {
  id = "overhead", title = "prereg overhead", question = "q",
  author = "bench",
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { { name = "true", runs = 500, warmup = 0, cmd = "/bin/true",
                  metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 1000,
           seed = 1, verdicts = { { "tie", ci_within = { 0.9, 1.1 } } } },
}
LUA

# Seconds the command "$@" takes, whole, its output dropped.
timed() {
  local t0=$EPOCHREALTIME
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
  local t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

prereg_pass() {
  "$PREREG" register overhead.lua --data "d$1" >/dev/null
  p=$(timed "$PREREG" run overhead.lua --data "d$1")
  rows=$(($(wc -l < "d$1/overhead/batches/b0001.csv") - 1))
  [ "$rows" -eq 1000 ] || { echo "pass $1: $rows rows, not 1000" >&2; exit 1; }
}

hyperfine_pass() {
  h=$(timed hyperfine -N --runs 1000 --export-json "h$1.json" /bin/true)
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
P=() H=()
for ((pass = 1; pass <= PASSES; pass++)); do
  if ((pass % 2)); then
    prereg_pass "$pass"
    hyperfine_pass "$pass"
  else
    hyperfine_pass "$pass"
    prereg_pass "$pass"
  fi
  echo "pass $pass: 1,000 runs: prereg run $p s, hyperfine $h s"
  P+=("$p") H+=("$h")
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "${P[*]}" "${H[*]}" <<'PY'
import csv, glob, json, statistics, sys
walls = [float(r["value"]) for f in glob.glob("d*/overhead/batches/b0001.csv")
         for r in csv.DictReader(open(f)) if r["metric"] == "wall_s"]
hf = [t for f in glob.glob("h*.json")
      for t in json.load(open(f))["results"][0]["times"]]
def line(what, a, b, unit, scale, target):
    r = a / b
    ok = "met" if r <= target else "NOT met"
    print(f"{what}: prereg {a * scale:.3f} {unit}, hyperfine {b * scale:.3f} "
          f"{unit}, ratio {r:.3f} (target <= {target:.2f}: {ok})")
line(f"median wall_s of /bin/true ({len(walls)} and {len(hf)} runs)",
     statistics.median(walls), statistics.median(hf), "ms", 1e3, 1.02)
p = [float(x) for x in sys.argv[1].split()]
h = [float(x) for x in sys.argv[2].split()]
line(f"1,000 runs, median of {len(p)} passes",
     statistics.median(p), statistics.median(h), "s", 1, 1.10)
PY
