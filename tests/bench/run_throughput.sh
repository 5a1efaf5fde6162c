#!/usr/bin/env bash
# run_throughput.sh: how long `prereg run` takes for 1,000 runs of
# /bin/true (two arms of 500 rounds, no warm-up) against
# `hyperfine -N --runs 1000 /bin/true`, both timed the same way around the
# whole command (bash's EPOCHREALTIME before and after, output to
# /dev/null). The two alternate, PASSES times each (default 5, at least 4:
# ABAB...), so that neither gets a quieter stretch of a shared machine.
# Prints every pass, both medians and their ratio against the target
# (prereg <= 1.3 x hyperfine). Not a ctest.
# Usage: tests/bench/run_throughput.sh [PREREG] [PASSES]
# SPDX-License-Identifier: MIT
set -eu
PREREG=${1:-${PREREG:-build/prereg}}
PASSES=${2:-5}
PREREG=$(realpath "$PREREG")
command -v hyperfine >/dev/null || { echo "hyperfine is not installed" >&2; exit 1; }
[ "$PASSES" -ge 4 ] || { echo "PASSES must be at least 4" >&2; exit 1; }
T=$(mktemp -d /tmp/prereg-throughput-XXXXXX)
trap 'chmod -R u+w "$T"; rm -rf "$T"' EXIT
cd "$T"
cat > throughput.lua <<'LUA'
protocol {
  id = "throughput", title = "prereg throughput", question = "q",
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

P=() H=()
for ((pass = 1; pass <= PASSES; pass++)); do
  "$PREREG" register throughput.lua --data "d$pass" >/dev/null
  p=$(timed "$PREREG" run throughput.lua --data "d$pass")
  h=$(timed hyperfine -N --runs 1000 /bin/true)
  rows=$(($(wc -l < "d$pass/throughput/batches/b0001.csv") - 1))
  [ "$rows" -eq 1000 ] || { echo "pass $pass: $rows rows, not 1000" >&2; exit 1; }
  echo "pass $pass: prereg $p s, hyperfine $h s"
  P+=("$p") H+=("$h")
done
python3 - "${P[*]}" "${H[*]}" <<'PY'
import statistics, sys
p = [float(x) for x in sys.argv[1].split()]
h = [float(x) for x in sys.argv[2].split()]
mp, mh = statistics.median(p), statistics.median(h)
r = mp / mh
print(f"median: prereg {mp:.3f} s, hyperfine {mh:.3f} s")
print(f"ratio prereg/hyperfine: {r:.3f} (target <= 1.3: {'met' if r <= 1.3 else 'NOT met'})")
PY
