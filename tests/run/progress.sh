#!/usr/bin/env bash
# progress.sh: what `prereg run` prints while a batch runs. Off a terminal
# (a pipe, a CI log) a line per tenth of the runs with the runs done of
# planned and the time left, each run's own line in the batch's log
# (frozen and in the MANIFEST), and a closing summary that fits a screen;
# on a terminal (a pseudo-terminal from script(1)) the line rewritten in
# place with its ETA.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"

T=$(mktemp -d /tmp/prereg-progress-XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T"

cat > sixty.lua <<'LUA'
protocol {
  id = "sixty", title = "Sixty runs", question = "Does env cost?",
  author = "t",
  arms = {
    { name = "direct", reference = true, run = "{cmd}" },
    { name = "env", run = "env {cmd}" },
  },
  workloads = {
    { name = "true", runs = 30, warmup = 1, cmd = "/bin/true",
      metrics = { "wall_s" } },
  },
  rule = { estimator = "median", confidence = 0.95, resamples = 200,
           seed = 17, verdicts = { { "slower", ci_excludes = 1 } } },
}
LUA

# Off a terminal: a pipe.
"$PREREG" register sixty.lua --data d >/dev/null || bad "register"
"$PREREG" run sixty.lua --data d 2>&1 | cat > pipe.txt
n=$(wc -l < pipe.txt)
check "a 60-run batch to a pipe prints at most 30 lines ($n)" [ "$n" -le 30 ]
check "and at least a line per tenth of it" \
  [ "$(grep -c '^prereg: \[[0-9]*/60\]' pipe.txt)" -ge 10 ]
check_grep "each line has the runs done of planned and the time left" \
  '^prereg: \[60/60\] 100%, 0 invalid, elapsed [0-9:]+, [0-9:]+ left$' \
  "$(cat pipe.txt)"
check "no line per run on the pipe" \
  [ "$(grep -c 'round [0-9]*: ok' pipe.txt)" -eq 0 ]
LOG=d/sixty/batches/b0001/b0001.log
check_grep "the first line names the batch's log" \
  "^prereg: \[1/60\] .*each run's line: .*/sixty/batches/b0001/b0001.log\)" \
  "$(cat pipe.txt)"
check "the log has a line per run" [ "$(wc -l < "$LOG")" -eq 60 ]
check_grep "a run's line in the log" '^\[60/60\] true (direct|env) round 30: ok \(' \
  "$(cat "$LOG")"
check "the log is frozen" [ "$(stat -c %a "$LOG")" = 444 ]
check "the log is in the MANIFEST" grep -q ' batches/b0001/b0001.log$' \
  d/sixty/MANIFEST
expect 0 "verify passes with the log" "$PREREG" verify sixty.lua --data d
# The closing summary: the status once, a hyperfine-style line per
# comparison, the way to the whole table.
check "the status line once" [ "$(grep -c '^status: ' pipe.txt)" -eq 1 ]
check_grep "a hyperfine-style line for the comparison" \
  '^  true · wall_s  env  [0-9.]+× \[[0-9.]+–[0-9.]+\] of direct[,:] ' \
  "$(cat pipe.txt)"
check_grep "the whole table is one command away" \
  '^the whole table: prereg analyze sixty.lua$' "$(cat pipe.txt)"

# A tampered log is found by verify like any frozen file.
chmod u+w "$LOG" && echo forged >> "$LOG" && chmod 444 "$LOG"
expect 1 "verify finds a changed log" "$PREREG" verify sixty.lua --data d
check_grep "verify names the log" 'b0001.log' "$out"

# On a terminal: the line rewritten in place, with its ETA, as before.
"$PREREG" register sixty.lua --data t >/dev/null || bad "register t"
script -q -e -c "'$PREREG' run sixty.lua --data t" /dev/null > tty.txt 2>&1
check_grep "on a terminal the line is rewritten in place with its ETA" \
  $'\r\033\\[K\\[60/60\\] true (direct|env)  elapsed [0-9:]+  ETA [0-9:]+' \
  "$(cat tty.txt)"
check "on a terminal no tenth lines" \
  [ "$(grep -c '^prereg: \[' tty.txt)" -eq 0 ]
check "the terminal's batch has its log too" \
  [ "$(wc -l < t/sixty/batches/b0001/b0001.log)" -eq 60 ]

done_testing 17
