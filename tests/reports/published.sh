#!/bin/bash
# published.sh: a sheet's `published` ratios side by side with the ones
# measured, in report.md and report.html: the published ratio and verdict,
# the measured ratio, its interval and verdict, the source, what differs,
# and the host the data come from; an arm without data says so.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?set PREREG to the built binary}"

W=$(mktemp -d)
on_exit 'chmod -R u+w "$W" 2>/dev/null; rm -rf "$W"'
cd "$W" || exit 1
cat >pub.lua <<'LUA'
protocol {
  id = "pub", title = "A replication",
  arms = { { name = "runc", reference = true }, { name = "gvisor" }, { name = "kata" } },
  workloads = { { name = "startup", metrics = { "wall_s" } } },
  rule = { seed = 17, resamples = 2000,
           verdicts = { { "slower", ci_excludes = 1, ratio_above = 1.10 },
                        { "tie", ci_within = { 0.95, 1.05 } } } },
  published = {
    { workload = "startup", metric = "wall_s", arm = "gvisor", ratio = 1.48,
      source = "the study, table 1", note = "runsc 2026 with systrap; here ptrace" },
    { workload = "startup", metric = "wall_s", arm = "kata", ratio = 31.7,
      verdict = "slower", source = "the study, table 1" },
  },
}
LUA
{
  echo "workload,arm,metric,value,run"
  for i in $(seq 1 10); do
    echo "startup,runc,wall_s,0.20$i,$i"
    echo "startup,gvisor,wall_s,0.40$i,$i"
  done
} >rows.csv
"$PREREG" register pub.lua --data d >/dev/null || bad "register"
expect 0 "check lists the published ratios" "$PREREG" check pub.lua
check_grep "... with their source" "startup wall_s gvisor: 1.48x \\(the study, table 1\\)" "$out"
"$PREREG" import pub.lua rows.csv --data d >/dev/null || bad "import"
expect 0 "report" "$PREREG" report pub.lua --data d
md=$(cat d/pub/report/report.md)
check_grep "a section of its own" "^## Published and measured$" "$md"
ratio=$("$PREREG" analyze pub.lua --json --data d | python3 -c '
import json, sys
r = [x for x in json.load(sys.stdin)["results"] if x["arm"] == "gvisor"][0]
print("%.3g" % r["ratio"])')
check_grep "gvisor: published and measured ratios, the source and what differs" \
  "^\\| startup \\| wall_s \\| gvisor \\| 1\\.48× \\| ${ratio}× \\| [0-9.]+–[0-9.]+ \\| \\*\\*slower\\*\\* \\| the study, table 1 \\| runsc 2026 with systrap; here ptrace \\|$" "$md"
check_grep "kata: the published verdict, and no data here" \
  "^\\| startup \\| wall_s \\| kata \\| 31\\.7× \\(slower\\) \\| – \\| – \\| no data \\| the study, table 1 \\| – \\|$" "$md"
check_grep "imported rows: the report says their host is not recorded" \
  "^The batches do not record the host they were measured on" "$md"
check_grep "the HTML has the table too" "<td align=\"right\">31.7× \\(slower\\)</td>" \
  "$(cat d/pub/report/report.html)"
done_testing 8
