#!/usr/bin/env bash
# interrupted.sh: every interrupted batch is on the record, through the
# real binary. SIGPIPE, SIGHUP and kill -9 each end a batch before its
# plan (prereg and its commands run in a private PID namespace): the
# status reads INTERRUPTED until --resume has completed the plan; after
# it, the report's Setup table has the batch with its host facts and a
# threat names the batch, when it was interrupted and at how many runs.
# `run --only W` follows the to-do rule of a plain run.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
T=$(mktemp -d /tmp/prereg-interrupted.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
D=$T/data

sheet() { # sheet ID
  cat >"$1.lua" <<LUA
protocol {
  id = "$1", title = "Interrupted", question = "Is it on the record?",
  author = "t",
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { { name = "w", runs = 5, cmd = "sleep 0.4", metrics = { "wall_s" } },
                { name = "v", runs = 3, cmd = "true", metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200, seed = 7,
           verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
}

# interrupt ID SIGNAL: runs the batch in a PID namespace of its own and
# sends SIGNAL to prereg once two runs are on disk.
interrupt() {
  unshare -p -f --mount-proc bash -c '
    "$1" run "$2.lua" --data "$3" >/dev/null 2>"$2.err" & p=$!
    csv=$3/$2/batches/b0001.csv
    for _ in $(seq 2400); do
      [ -e "$csv" ] && [ "$(wc -l <"$csv")" -ge 3 ] && break
      kill -0 $p 2>/dev/null || break
      sleep 0.05
    done
    kill -s "$4" $p
    wait $p
    echo $? >"$2.rc"' _ "$PREREG" "$1" "$D" "$2"
}

for sig in PIPE HUP KILL; do
  id=$(tr A-Z a-z <<<"x$sig")
  sheet "$id"
  "$PREREG" register "$id.lua" --data "$D" >/dev/null || bad "$sig: register"
  interrupt "$id" "$sig"
  rc=$(cat "$id.rc")
  check "$sig: prereg ended before the plan (rc $rc)" [ "$rc" -ne 0 ]
  kept=$(($(wc -l <"$D/$id/batches/b0001.csv") - 1))
  check "$sig: runs were kept ($kept rows)" [ "$kept" -ge 2 ]
  expect 0 "$sig: status" "$PREREG" status "$id.lua" --data "$D"
  check_grep "$sig: INTERRUPTED before the resume" "^status: INCOMPLETE \([0-9]+/16\) · INTERRUPTED$" "$out"
  # --only of a workload nothing of which was run follows the same rule.
  expect 1 "$sig: run --only v is refused like a plain run" \
    "$PREREG" run "$id.lua" --data "$D" --only v
  check_grep "$sig: it says how to go on" "--resume --only v" "$out"
  expect 0 "$sig: --resume completes the plan" "$PREREG" run "$id.lua" --data "$D" --resume
  expect 0 "$sig: status after" "$PREREG" status "$id.lua" --data "$D"
  check_grep "$sig: COMPLETE once the plan is" "^status: COMPLETE$" "$out"
  expect 0 "$sig: report" "$PREREG" report "$id.lua" --data "$D" --out "$T/$id-report"
  md=$T/$id-report/report.md
  check_grep "$sig: the Setup table has b0001 with its host facts" \
    "^\| $(hostname) \| Linux .* \| [0-9]+ \| [0-9]+ MiB \| .* \| b0001, b0002 \|$" "$(cat "$md")"
  check_grep "$sig: the batch line says interrupted" "^- b0001: run from [0-9T:Z-]+.*; interrupted\.$" "$(cat "$md")"
  check_grep "$sig: a threat names the batch, when and at how many runs" \
    "^- Interrupted batch: b0001 was interrupted (at|after the run started at) 20[0-9-]+T[0-9:]+Z, at [0-9]+ runs of the 16 it planned" "$(cat "$md")"
  expect 0 "$sig: verify" "$PREREG" verify "$id.lua" --data "$D"
done
check_grep "kill -9: the threat says it was not frozen by prereg" \
  "prereg ended without freezing it" "$(cat "$T/xkill-report/report.md")"
check_grep "SIGHUP: the threat says a signal ended it" \
  "a signal ended it" "$(cat "$T/xhup-report/report.md")"

# A reader of the output gone mid-run: the batch is frozen, never torn.
sheet xhead
"$PREREG" register xhead.lua --data "$D" >/dev/null || bad "register xhead"
"$PREREG" run xhead.lua --data "$D" 2>/dev/null | head -1 >/dev/null
expect 0 "run | head: verify" "$PREREG" verify xhead.lua --data "$D"
check "run | head: the batch is frozen" [ -z "$(find "$D/xhead/batches" -name 'b*.csv' -perm -u+w)" ]

done_testing 46
