#!/usr/bin/env bash
# load_threat.sh: the report warns of a high load only for batches that
# hold counted rows: a batch whose rows an amendment superseded is not
# the data, so its load is no threat to them. The batches' load facts
# are fabricated (the report is then --force'd, stamped UNVERIFIED).
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"

T=$(mktemp -d /tmp/prereg-load-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T"

sheet() { # sheet AMENDMENT
  cat > exp.lua <<LUA
protocol {
  id = "exp", title = "Load", question = "Is b faster than a?",
  author = "t",
  arms = {
    { name = "a", reference = true, run = "true" },
    { name = "b", run = "true" },
  },
  workloads = {
    { name = "old", source = "import", runs = 3, metrics = { "wall_s" } },
    { name = "new", source = "import", runs = 3, metrics = { "wall_s" } },
  },
  rule = { estimator = "median", confidence = 0.95, resamples = 200,
           seed = 3, verdicts = { { "faster", ratio_below = 1, ci_excludes = 1 } } },
  amendments = { $1 },
}
LUA
}
sheet ""
"$PREREG" register exp.lua --data d >/dev/null || bad "register"
rows() { # rows WORKLOAD
  echo "workload,arm,metric,value,run"
  for r in 1 2 3; do
    echo "$1,a,wall_s,0.$((40 + r)),$r"
    echo "$1,b,wall_s,0.$((20 + r)),$r"
  done
}
rows old > old.csv
rows new > new.csv
expect 0 "import the old workload's values (batch 1)" \
  "$PREREG" import exp.lua old.csv --data d
expect 0 "import the new workload's values (batch 2)" \
  "$PREREG" import exp.lua new.csv --data d
sheet '{ date = "2026-11-01", why = "The old files were wrong.", supersedes = { "old" } }'
expect 0 "amend: the old workload's rows are superseded" \
  "$PREREG" amend exp.lua --data d
# Both batches ran, say their facts, with a load of 9.5 on 2 cores.
n=0
for f in d/exp/batches/b0001.json d/exp/batches/b0002.json; do
  python3 - "$f" <<'PY' && n=$((n + 1))
import json, os, sys
p = sys.argv[1]
o = json.load(open(p)) if os.path.exists(p) else {}
if os.path.exists(p):
    os.chmod(p, 0o644)
o.setdefault("host", {})
o["host"]["load_avg_start"] = [9.5, 1, 1]
o["host"]["cores"] = 2
json.dump(o, open(p, "w"))
PY
done
check "both batches' facts say a load of 9.5 on 2 cores" [ "$n" -eq 2 ]
expect 0 "report --force" "$PREREG" report exp.lua --data d --force
md=$(cat d/exp/report/report.md 2>/dev/null)
check_grep "the counted batch's high load is a threat" \
  'High load: batch b0002 ran with a load average of 9.50 on 2 cores' "$md"
check "the superseded batch's load is not" \
  bash -c '! grep -q "High load: batch b0001" d/exp/report/report.md'
done_testing 6
