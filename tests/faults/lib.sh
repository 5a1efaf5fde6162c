# lib.sh: what every fault script shares: tests/lib.sh's checks, a count
# of fault scenarios, a scratch folder that is removed (and unmounted) at
# exit, and checks of the data folder.
# SPDX-License-Identifier: MIT
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
: "${PREREG:?PREREG must name the built prereg binary}"
scenarios=0
scenario() { scenarios=$((scenarios + 1)); echo "--- scenario $scenarios: $*"; }

T=$(mktemp -d /tmp/prereg-faults-XXXXXX)
MOUNTS=()
cleanup() {
  local m
  for m in "${MOUNTS[@]}"; do umount -l "$m" 2>/dev/null; done
  # Processes a failed check may have left: only ours, by our folder.
  pkill -KILL -f "$T/" 2>/dev/null
  chmod -R u+w "$T" 2>/dev/null
  rm -rf "$T"
}
[ -n "${KEEP:-}" ] || on_exit cleanup
cd "$T" || exit 1

# Writes a sheet with one workload per line of "$@" ("name runs cmd").
# Arms: a (reference), b, c. Extra Lua for each workload via WEXTRA.
sheet() {
  local file=$1 id=$2; shift 2
  {
    echo "protocol {"
    echo "  id = \"$id\", title = \"Faults\", question = \"Does it hold?\", author = \"t\","
    echo "  arms = { { name = \"a\", reference = true }, { name = \"b\" }, { name = \"c\" } },"
    echo "  workloads = {"
    local w
    for w in "$@"; do echo "    $w,"; done
    echo "  },"
    echo "  rule = { estimator = \"median\", confidence = 0.95, resamples = 200, seed = 3,"
    echo "           verdicts = { { \"slower\", ci_excludes = 1 } } },"
    echo "}"
  } > "$file"
}

# Counts rows per (workload, arm, round, metric) in every batch of the
# experiment folder $1 and compares with the plan "workload:rounds:metrics"
# entries ($2...), over arms a b c: each exactly once (no run lost or
# doubled). With ALLOW_MISSING=1 only doubles are errors.
plan_check() {
  python3 - "$@" <<'PY'
import csv, glob, os, sys
exp, plan = sys.argv[1], sys.argv[2:]
allow_missing = os.environ.get("ALLOW_MISSING") == "1"
seen = {}
for f in sorted(glob.glob(os.path.join(exp, "batches", "b*.csv"))):
    with open(f, newline="") as fh:
        text = fh.read()
    # A torn last line of an unfinished batch is not a row yet.
    if not text.endswith("\n"):
        text = text[:text.rfind("\n") + 1]
    for r in csv.DictReader(text.splitlines(True)):
        k = (r["workload"], r["arm"], r["round"], r["metric"])
        seen.setdefault(k, []).append(os.path.basename(f))
errs = [("doubled", k, v) for k, v in seen.items() if len(v) > 1]
want = set()
for p in plan:
    w, n, metrics = p.split(":")
    for a in "abc":
        for r in range(1, int(n) + 1):
            for m in metrics.split(","):
                want.add((w, a, str(r), m))
extra = set(seen) - want
errs += [("unplanned", k) for k in extra]
if not allow_missing:
    errs += [("lost", k) for k in sorted(want - set(seen))]
for e in errs[:10]:
    print("plan_check:", *e, file=sys.stderr)
sys.exit(1 if errs else 0)
PY
}

# 1 when no process whose command line holds marker $1 is alive.
none_left() { ! pgrep -f -- "$1" >/dev/null; }

# Waits up to $2 seconds (default 30) for none_left "$1": what was ended
# may take a loaded machine a while to go; what was left keeps running
# (every scenario's commands outlast that, or end on their own).
gone_within() {
  local i
  for ((i = 0; i < ${2:-30} * 20; i++)); do none_left "$1" && return 0; sleep 0.05; done
  return 1
}

# The line `make test` sums over the fault scripts; just before
# done_testing.
report_scenarios() {
  echo "faults: $scenarios fault scenarios ran in $(basename "$0")"
}
