#!/usr/bin/env bash
# todo.sh: done versus to-do through the real binary: a complete experiment
# has nothing to do (exit 0), a partial one is refused without --resume
# (exit 1) with exactly the runs --resume will do, and --dry-run says the
# same numbers and the run ids the batch then gives.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"

T=$(mktemp -d /tmp/prereg-todo-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T"
D=$T/data
cat > two.lua <<'LUA'
protocol {
  id = "two", title = "Done and to do", author = "t",
  arms = {
    { name = "x", reference = true },
    { name = "y", run = "env {cmd}" },
  },
  workloads = {
    { name = "a", runs = 3, cmd = "/bin/true" },
    { name = "b", runs = 2, warmup = 1, cmd = "/bin/true" },
    { name = "imported", metrics = { "wall_s" } },
  },
  rule = { seed = 5, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
# The "WORKLOAD / ARM: rounds ..." lines of a message.
pairs() { grep -E '^  [a-z]+ / [a-z]+: rounds ' <<<"$1"; }

expect 0 "dry run before registering" "$PREREG" run two.lua --data "$D" --dry-run
check_grep "nothing collected: 10 runs to do" "^10 runs to do$" "$out"
expect 0 "register" "$PREREG" register two.lua --data "$D"
expect 0 "run --only a" "$PREREG" run two.lua --data "$D" --only a
check_grep "a: 6 runs" "batch b0001: 6 runs, 6 valid" "$out"

# --- partial: refused, naming what --resume will do ------------------------
expect 1 "partial: run without --resume refused" "$PREREG" run two.lua --data "$D"
refused=$out
check_grep "partial: the counts" "6 of the 10 planned runs are collected and 4 are left" "$refused"
check_grep "partial: the command to run" "'prereg run two.lua --resume' runs exactly these" "$refused"
check_grep "partial: b / x with its rounds" "^  b / x: rounds 1, 2 \(2 runs\)$" "$refused"
check_grep "partial: b / y with its rounds" "^  b / y: rounds 1, 2 \(2 runs\)$" "$refused"
check "partial: nothing of a listed" [ -z "$(grep -E '^  a / ' <<<"$refused")" ]
check "partial: refusal wrote no batch" [ ! -e "$D/two/batches/b0002.csv" ]

expect 0 "partial: dry run" "$PREREG" run two.lua --data "$D" --dry-run
dry=$out
check_grep "dry run: the same counts" "^4 of the 10 planned runs to do \(6 collected\)" "$dry"
check "dry run: the same runs as the refusal" [ "$(pairs "$dry")" = "$(pairs "$refused")" ]
check_grep "dry run: a is collected" "x round 3: already collected" "$dry"
check_grep "dry run: ids of the batch's own runs" "bNEXT-0004 round 2" "$dry"
check "dry run: no fifth id" [ -z "$(grep bNEXT-0005 <<<"$dry")" ]
planned_ids=$(grep -oE 'bNEXT-[0-9]+ round [0-9]+ [a-z]+' <<<"$dry" | sed 's/bNEXT/b0002/')

expect 0 "resume" "$PREREG" run two.lua --data "$D" --resume
check_grep "resume: the 4 runs" "batch b0002: 4 runs, 4 valid" "$out"
got_ids=$(python3 -c '
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]))]
rows.sort(key=lambda r: int(r["seq"]))
print("\n".join("%s round %s %s" % (r["run_id"], r["round"], r["arm"]) for r in rows))' \
  "$D/two/batches/b0002.csv")
check "resume: run ids and rounds as the dry run said" [ "$planned_ids" = "$got_ids" ]

# --- complete: nothing to do, exit 0 -----------------------------------------
expect 0 "complete: run exits 0" "$PREREG" run two.lua --data "$D"
check_grep "complete: nothing to do" "^nothing to do: all 10 planned runs are collected$" "$out"
check "complete: no new batch" [ ! -e "$D/two/batches/b0003.csv" ]
expect 0 "complete: run --resume" "$PREREG" run two.lua --data "$D" --resume
check_grep "complete --resume: nothing to do" "^nothing to do: all 10 planned" "$out"
expect 0 "complete: dry run" "$PREREG" run two.lua --data "$D" --dry-run
check_grep "complete dry run: the same words" "^nothing to do: all 10 planned runs are collected$" "$out"
expect 0 "complete: --only b" "$PREREG" run two.lua --data "$D" --only b
check_grep "complete --only: nothing to do" "all 4 planned runs of b are collected" "$out"
expect 2 "--only an import-only workload" "$PREREG" run two.lua --data "$D" --only imported
check_grep "--only imported: why" "has no command \(its data comes by prereg import\)" "$out"
expect 0 "verify" "$PREREG" verify two.lua --data "$D"
done_testing 30
