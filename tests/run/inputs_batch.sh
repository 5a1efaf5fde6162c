#!/usr/bin/env bash
# inputs_batch.sh: a batch hashes its inputs again when it ends, through
# the real binary. Attack: a command rewrites a configuration file it
# reads for a few runs, then puts the old content back before the batch
# ends (the digest at the end is the registered one). The batch is kept,
# its facts name the input, `run` fails saying so, and `status`,
# `verify`, `analyze` and the report say INPUTS CHANGED with provisional
# verdicts. A second attack leaves the edit in place. Control: the same
# sheet whose command only reads: COMPLETE, exit 0, no inputs_changed.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
T=$(mktemp -d /tmp/prereg-inputs-batch.XXXXXX)
on_exit 'rm -rf "$T"'
field() { # field FILE PYTHON-EXPRESSION-ON-j
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

# study MODE: a sheet whose command counts its runs in $T/MODE.n and, by
# MODE, rewrites conf.txt at run 3 and puts it back at run 7 (putback),
# rewrites it for good at run 3 (keep), or only reads it (read).
study() {
  mkdir -p "$T/$1"
  echo "level = 1" >"$T/$1/conf.txt"
  cat >"$T/$1/work.sh" <<'SH'
n=$(( $(cat "$2" 2>/dev/null || echo 0) + 1 )); echo "$n" >"$2"
grep -q level "$1/conf.txt" || exit 3
case "$3:$n" in
  putback:3|keep:3) echo "level = 9" >"$1/conf.txt" ;;
  putback:7) echo "level = 1" >"$1/conf.txt" ;;
esac
exit 0
SH
  cat >"$T/$1/s.lua" <<LUA
protocol {
  id = "ib", title = "Inputs in a batch", question = "Did they hold?",
  author = "t",
  inputs = { "work.sh", "conf.txt" },
  arms = { { name = "a", reference = true }, { name = "b" } },
  workloads = { { name = "w", runs = 5,
                  cmd = "sh {sheet_dir}/work.sh {sheet_dir} $T/$1.n $1",
                  metrics = { "wall_s" } } },
  rule = { estimator = "median", confidence = 0.95, resamples = 200,
           seed = 7, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA
  "$PREREG" register "$T/$1/s.lua" --data "$T/$1.d" >/dev/null 2>&1
}

# --- control: a command that only reads its inputs ------------------------
study read
expect 0 "control: run" "$PREREG" run "$T/read/s.lua" --data "$T/read.d"
check_grep "control: all ten runs valid" "10 runs, 10 valid" "$out"
check "control: no inputs_changed in the facts" \
  [ "$(field "$T/read.d/ib/batches/b0001.json" '"inputs_changed" in j')" = False ]
expect 0 "control: status" "$PREREG" status "$T/read/s.lua" --data "$T/read.d"
check_grep "control: status COMPLETE" "^status: COMPLETE$" "$out"

# --- attack: an edit for four runs, put back before the end ---------------
study putback
expect 1 "putback: run fails" "$PREREG" run "$T/putback/s.lua" --data "$T/putback.d"
check_grep "putback: the message names the input" \
  "written conf.txt during the batch" "$out"
check_grep "putback: the message says the batch is flagged" \
  "flagged INPUTS CHANGED" "$out"
check "putback: the content is the registered one again" \
  grep -qx "level = 1" "$T/putback/conf.txt"
check_grep "putback: the facts name it" "written conf.txt" \
  "$(field "$T/putback.d/ib/batches/b0001.json" 'j["inputs_changed"]')"
expect 0 "putback: verify" "$PREREG" verify "$T/putback/s.lua" --data "$T/putback.d"
check_grep "putback: verify says INPUTS CHANGED" "status: .*INPUTS CHANGED" "$out"
expect 0 "putback: status" "$PREREG" status "$T/putback/s.lua" --data "$T/putback.d"
check_grep "putback: status says INPUTS CHANGED" "status: .*INPUTS CHANGED" "$out"
"$PREREG" analyze "$T/putback/s.lua" --data "$T/putback.d" --json >"$T/a.json" 2>/dev/null
check_grep "putback: analyze --json flags it" "INPUTS CHANGED" \
  "$(field "$T/a.json" 'j["status"]["flags"]')"
check_grep "putback: analyze --json: provisional" "True" \
  "$(field "$T/a.json" 'j["provisional"]')"
expect 0 "putback: report" "$PREREG" report "$T/putback/s.lua" --data "$T/putback.d" --out "$T/rep"
check_grep "putback: the report says why" "INPUTS CHANGED: a batch" \
  "$(cat "$T"/rep/report.md 2>/dev/null)"

# --- attack: the edit stays ------------------------------------------------
study keep
expect 1 "keep: run fails" "$PREREG" run "$T/keep/s.lua" --data "$T/keep.d"
check_grep "keep: the message names the changed input" "changed conf.txt" "$out"
expect 0 "keep: verify" "$PREREG" verify "$T/keep/s.lua" --data "$T/keep.d"
check_grep "keep: verify says INPUTS CHANGED" "status: .*INPUTS CHANGED" "$out"

done_testing 21
