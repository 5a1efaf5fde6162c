#!/usr/bin/env bash
# plan_write.sh: `prereg plan --write` through the real binary, on a
# fabricated pilot (prereg import; no timing). The size is chosen for the
# comparisons the hypotheses test: a near-tie in a secondary metric no
# longer blocks the write (control: the same sheet without hypotheses
# writes nothing); --runs N gives and registers the power at N; --looks
# writes the looks and plan then uses the sheet's own; looks below the
# level of their share of the error are refused as check refuses them,
# --looks or the sheet's own, and never written. The writer reads
# the text as Lua does: a number inside a string continued by \z or by a
# backslash before CR LF, a long string or a comment is never edited (the
# command stays byte for byte, the real runs are written); a text whose
# reload shows another change than the one chosen is refused, untouched.
# SPDX-License-Identifier: MIT
set -u
. "$(dirname "$0")/../lib.sh"
: "${PREREG:?}"
PY=/usr/bin/python3
T=$(mktemp -d /tmp/prereg-plan-write.XXXXXX)
on_exit 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"'
cd "$T" || exit 1
export PREREG_NOW=1792540800 # 2026-10-21T00:00:00Z

# The pilot: wall_s 2x apart (decides at once), user_s a near-tie of
# 1.01x with a wide spread (never decides at these sizes).
cat >src.lua <<'LUA'
protocol {
  id = "src", title = "src", author = "t",
  arms = { { name = "ref", reference = true }, { name = "b" } },
  workloads = { { name = "w", runs = 10, metrics = { "wall_s", "user_s" } } },
  rule = { seed = 3, verdicts = {
    { "faster", ratio_below = 1, ci_excludes = 1 },
    { "slower", ratio_above = 1, ci_excludes = 1 } } },
}
LUA
$PY - >src.csv <<'PY'
print("workload,arm,metric,value")
for i in range(10):
    print("w,ref,wall_s,%.4f" % (1.0 + i / 100))
    print("w,b,wall_s,%.4f" % (2.0 + i / 100))
    print("w,ref,user_s,%.4f" % (1.0 + i))
    print("w,b,user_s,%.4f" % (1.01 * (1.0 + i)))
PY
expect 0 "pilot: register" "$PREREG" register src.lua
expect 0 "pilot: import" "$PREREG" import src.lua src.csv
PLAN=(--pilot data/src --sizes 5,10,20 --sims 200)

# A sheet to plan: text around the workload given as $1 (Lua), with or
# without the hypothesis.
sheet() { # id workload-text hypotheses(0/1) > file
  printf 'protocol {\n  id = "%s", title = "t", author = "t",\n' "$1"
  printf '  arms = { { name = "ref", reference = true }, { name = "b" } },\n'
  printf '  workloads = {\n    %s\n  },\n' "$2"
  printf '  rule = { seed = 3, verdicts = {\n'
  printf '    { "faster", ratio_below = 1, ci_excludes = 1 },\n'
  printf '    { "slower", ratio_above = 1, ci_excludes = 1 } } },\n'
  if [ "$3" = 1 ]; then
    printf '  hypotheses = { { id = "H1", says = "b is slower",\n'
    printf '    workload = "w", metric = "wall_s", arms = { "b" },\n'
    printf '    claim = verdict_is("slower") } },\n'
  fi
  printf '}\n'
}
WL='{ name = "w", cmd = "true", runs = 40, metrics = { "wall_s", "user_s" } },'

# Control: without hypotheses every comparison sets the size, and the
# near-tie reaches the power at none: nothing written.
sheet all "$WL" 0 >all.lua
cp all.lua all.before
expect 1 "no hypotheses: the near-tie blocks --write" "$PREREG" plan all.lua \
  "${PLAN[@]}" --write
check_grep "no hypotheses: says which" "w/user_s/b decides with a probability of" "$out"
check "no hypotheses: the sheet untouched" cmp -s all.lua all.before

# With a hypothesis on wall_s: sized for it, user_s secondary; written.
sheet hyp "$WL" 1 >hyp.lua
cp hyp.lua hyp.before
expect 0 "hypotheses: plan --write" "$PREREG" plan hyp.lua "${PLAN[@]}" --write
check_grep "hypotheses: user_s is secondary" "secondary: no hypothesis" "$out"
check_grep "hypotheses: sized for them" \
  "sized for the comparisons the hypotheses test" "$out"
check_grep "hypotheses: the others' power beside it" \
  "w: 5: its 1 sized comparison decides there with probability 100.0%; the other" \
  "$out"
check_grep "hypotheses: written" "hyp.lua: written" "$out"
check_grep "hypotheses: runs = 5" 'cmd = "true", runs = 5, metrics' \
  "$(cat hyp.lua)"
check_grep "hypotheses: the block says for what" 'sized_for = "hypotheses"' \
  "$(cat hyp.lua)"
expect 0 "hypotheses: the written sheet checks" "$PREREG" check hyp.lua
expect 0 "hypotheses: --json" "$PREREG" plan hyp.lua "${PLAN[@]}" --json
printf '%s' "$out" >hyp.json
check "hypotheses: JSON sized flags, choice and power" $PY - hyp.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
sized = {(c["metric"], c["sized"]) for c in j["comparisons"]}
assert sized == {("wall_s", True), ("user_s", False)}, sized
assert j["sized_for"] == "hypotheses" and j["runs"] is None, j
assert j["recommended"] == {"w": 5}, j["recommended"]
assert j["achieved"]["w"] >= 0.8, j["achieved"]
lo, hi = j["others_p_decided"]["w"]
assert 0 <= lo <= hi < 0.8, (lo, hi)
PY

# --runs 30: the power at 30, registered with 30 (30 is not a --sizes).
cp hyp.before r30.lua
sed -i 's/id = "hyp"/id = "r30"/' r30.lua
expect 0 "--runs 30 --write" "$PREREG" plan r30.lua "${PLAN[@]}" --runs 30 \
  --write
check_grep "--runs 30: says given" "w: 30 \(given by --runs\)" "$out"
check_grep "--runs 30: runs = 30" 'runs = 30, metrics' "$(cat r30.lua)"
check_grep "--runs 30: the block registers it" \
  'sizes = \{ 5, 10, 20, 30 \}' "$(cat r30.lua)"
check_grep "--runs 30: the block's runs" '^    runs = 30,$' "$(cat r30.lua)"
check_grep "--runs 30: the block's power there" 'achieved = 1,' \
  "$(cat r30.lua)"
expect 0 "--runs 30: the written sheet checks" "$PREREG" check r30.lua
expect 2 "--runs 0 refused" "$PREREG" plan r30.lua "${PLAN[@]}" --runs 0
# Registered and reported: the report says the runs were given, not
# chosen, and the power the plan found there.
sheet rep '{ name = "w", runs = 40, metrics = { "wall_s", "user_s" } },' 1 \
  >rep.lua
expect 0 "report: plan --runs 30 --write" "$PREREG" plan rep.lua \
  "${PLAN[@]}" --runs 30 --write
expect 0 "report: register" "$PREREG" register rep.lua
expect 0 "report: import" "$PREREG" import rep.lua src.csv
expect 0 "report: render" "$PREREG" report rep.lua --out rep
md=$(cat rep/report.md)
check_grep "report: the power found at the runs" \
  "The power at the runs per arm was found by .prereg plan." "$md"
check_grep "report: the runs given, the power there" \
  "The runs per arm \(30\) were given by the author; the plan found the probability that every comparison a hypothesis tests .*decides there: at least 100%" \
  "$md"

# The writer against Lua's own lexical rules: each text below hides
# "runs = 7" where Lua does not read a field, beside the real runs = 40.
# After --write the text is the one before with only the real 40 turned
# into 5 and the plan block added.
same_but_runs() { # before after
  $PY - "$1" "$2" <<'PY'
import sys
old = open(sys.argv[1], "rb").read()
new = open(sys.argv[2], "rb").read()
at = new.index(b"\n\n  plan = {")
end = new.index(b"\n  },", at) + len(b"\n  },")
assert old.count(b"runs = 40") == 1, old
assert new[:at] + new[end:] == old.replace(b"runs = 40", b"runs = 5"), new
PY
}
n=0
for wl in \
  '{ name = "w", cmd = "echo \z
       runs = 7, x", runs = 40, metrics = { "wall_s", "user_s" } },' \
  "{ name = \"w\", cmd = \"echo \\"$'\r\n'"runs = 7, x\", runs = 40, metrics = { \"wall_s\", \"user_s\" } }," \
  "{ name = \"w\", cmd = \"echo \\"$'\n\r'"runs = 7, x\", runs = 40, metrics = { \"wall_s\", \"user_s\" } }," \
  '{ name = "w", cmd = [==[echo ]] runs = 7, ]=]x]==], runs = 40, metrics = { "wall_s", "user_s" } },' \
  '{ name = "w", cmd = "a \"runs = 7\" \x41\u{42}\065", runs = 40, metrics = { "wall_s", "user_s" } },' \
  '{ name = "w", --[=[ runs = 7, ]] ]=] cmd = "x",
      -- runs = 7,
      runs = 40, metrics = { "wall_s", "user_s" } },'; do
  n=$((n + 1))
  sheet "lex$n" "$wl" 1 >lex$n.lua
  cp lex$n.lua lex$n.before
  expect 0 "lexer $n: plan --write" "$PREREG" plan lex$n.lua "${PLAN[@]}" \
    --write
  check "lexer $n: only the real runs changed" same_but_runs lex$n.before \
    lex$n.lua
  expect 0 "lexer $n: the written sheet checks" "$PREREG" check lex$n.lua
done

# A runs field --write does not see as one (a bracketed key): the edit
# would leave the loaded runs at 40; the reload says so, and the sheet
# is left untouched.
sheet brk '{ name = "w", cmd = "true", ["runs"] = 40, metrics = { "wall_s", "user_s" } },' 1 >brk.lua
cp brk.lua brk.before
expect 2 "a runs the writer cannot reach: refused" "$PREREG" plan brk.lua \
  "${PLAN[@]}" --write
check_grep "refused: says why" "has another number of runs than the one chosen" \
  "$out"
check "refused: the sheet untouched" cmp -s brk.lua brk.before
# A plan field that is not a table: the block added beside it loses.
sheet pnil "$WL" 1 >pnil.lua
sed -i 's/^}$/  plan = nil,\n}/' pnil.lua
cp pnil.lua pnil.before
expect 2 "a plan the writer cannot replace: refused" "$PREREG" plan pnil.lua \
  "${PLAN[@]}" --write
check_grep "refused: the plan block" "another plan block than the one written" \
  "$out"
check "refused: that sheet untouched" cmp -s pnil.lua pnil.before

# A hypothesis `against` an arm besides the reference: that pair is
# planned (without pairs = "all") and sized for; the rest secondary.
cat >tri.lua <<'LUA'
protocol {
  id = "tri", title = "t", author = "t",
  arms = { { name = "ref", reference = true }, { name = "b" },
           { name = "c" } },
  workloads = { { name = "w", runs = 10, metrics = { "wall_s" } } },
  rule = { seed = 3, verdicts = {
    { "faster", ratio_below = 1, ci_excludes = 1 },
    { "slower", ratio_above = 1, ci_excludes = 1 } } },
  hypotheses = { { id = "H1", says = "c is slower than b", workload = "w",
    metric = "wall_s", arms = { "c" }, against = "b",
    claim = verdict_is("slower") } },
}
LUA
$PY - >tri.csv <<'PY'
print("workload,arm,metric,value")
for i in range(10):
    for a, m in (("ref", 1.0), ("b", 1.0), ("c", 2.0)):
        print("w,%s,wall_s,%.4f" % (a, m * (1.0 + i / 100)))
PY
expect 0 "against: register" "$PREREG" register tri.lua
expect 0 "against: import" "$PREREG" import tri.lua tri.csv
expect 0 "against: plan --json" "$PREREG" plan tri.lua --pilot data/tri \
  --sizes 5,10 --sims 100 --json
printf '%s' "$out" >tri.json
check "against: the pair planned and sized, the rest secondary" \
  $PY - tri.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
got = [(c["arm"], c["reference"], c["sized"]) for c in j["comparisons"]]
assert got == [("b", "ref", False), ("c", "ref", False), ("c", "b", True)], got
assert j["recommended"] == {"w": 5}, j
PY

# An edit saved to the sheet while the simulations run is kept: plan is
# stopped (SIGSTOP) once its simulation threads exist, so after it read
# the sheet and before it writes; the sheet is edited; plan goes on and
# refuses to replace it. (The hypotheses case above is the control.)
sheet race "$WL" 1 >race.lua
PREREG_THREADS=2 "$PREREG" plan race.lua --pilot data/src \
  --sizes 5,10,20,50,100,200 --sims 3000 --write >race.out 2>&1 &
pid=$!
# Its threads come and go between batches: stop it, and if it was
# caught between two, let it go on and try again.
caught=0
while kill -0 "$pid" 2>/dev/null; do
  if [ "$(ls "/proc/$pid/task" 2>/dev/null | wc -l)" -ge 2 ]; then
    kill -STOP "$pid" 2>/dev/null
    caught=$(ls "/proc/$pid/task" 2>/dev/null | wc -l)
    [ "$caught" -ge 2 ] && break
    kill -CONT "$pid" 2>/dev/null
  fi
  sleep 0.01
done
printf -- '-- edited while plan ran\n' >>race.lua
cp race.lua race.edited
kill -CONT "$pid" 2>/dev/null
wait "$pid"
rc=$?
check "race: plan caught while it simulated" [ "$caught" -ge 2 ]
check "race: refused (exit 1, got $rc)" [ "$rc" -eq 1 ]
check_grep "race: says the sheet changed" "race.lua: changed since prereg read it" \
  "$(cat race.out)"
check "race: the edit kept" cmp -s race.lua race.edited

# Looks: --write writes them, and plan then plans the sheet's own.
sheet seq "$WL" 1 >seq.lua
expect 2 "--runs must be the last look" "$PREREG" plan seq.lua "${PLAN[@]}" \
  --looks 5,10,20 --runs 10
expect 0 "--looks --write" "$PREREG" plan seq.lua "${PLAN[@]}" \
  --looks 5,10,20 --write
check_grep "--looks: the looks and their runs" \
  'runs = 20, looks = \{ 5, 10, 20 \}, metrics' "$(cat seq.lua)"
check_grep "--looks: the block names them" '^    looks = \{ 5, 10, 20 \},$' \
  "$(cat seq.lua)"
expect 0 "--looks: the written sheet checks" "$PREREG" check seq.lua
expect 0 "the sheet's looks by default" "$PREREG" plan seq.lua "${PLAN[@]}" \
  --json
check_grep "the sheet's looks planned" '"looks": \[5, 10, 20\]' "$out"
check_grep "the sequential design chosen" '"recommended": \{"w": 20\}' "$out"
expect 0 "--write again: unchanged" "$PREREG" plan seq.lua "${PLAN[@]}" \
  --write
check_grep "again: unchanged" "seq.lua: unchanged" "$out"
# Looks below the fewest an interval at a look's share of the error
# needs (5 at 97.5%, two looks of 95%): refused by plan as check refuses
# them (exit 2, naming the flag, the look and the fix), with or without
# --write, the sheet untouched; at that floor written, and check passes.
sheet flo "$WL" 1 >flo.lua
cp flo.lua flo.before
expect 2 "--looks below the level --write: refused" "$PREREG" plan flo.lua \
  "${PLAN[@]}" --looks 4,20 --write
check_grep "--looks below the level: names the flag, the look and the fix" \
  '^prereg: --looks 4,20: look 1: 4 runs per arm is below the 5 an interval at this look.s 97\.5% \(its share of the error over 2 looks\) needs: .*give every look at least 5' \
  "$out"
check "--looks below the level: the sheet untouched" cmp -s flo.lua flo.before
expect 2 "--looks below the level, no --write: refused" "$PREREG" plan \
  flo.lua "${PLAN[@]}" --looks 4,20
check_grep "no --write: said alike" '^prereg: --looks 4,20: look 1: 4 runs per arm' \
  "$out"
expect 2 "four looks: 5 is below their share's level: refused" "$PREREG" \
  plan flo.lua "${PLAN[@]}" --looks 5,10,15,20 --write
check_grep "four looks: the level of a quarter of the error" \
  '^prereg: --looks 5,10,15,20: look 1: 5 runs per arm is below the 6 an interval at this look.s 98\.75% \(its share of the error over 4 looks\) .*give every look at least 6' \
  "$out"
check "four looks: the sheet untouched" cmp -s flo.lua flo.before
expect 0 "--looks at the level: written" "$PREREG" plan flo.lua \
  "${PLAN[@]}" --looks 5,20 --write
check_grep "at the level: the looks written" 'runs = 20, looks = \{ 5, 20 \}, metrics' \
  "$(cat flo.lua)"
expect 0 "at the level: check passes" "$PREREG" check flo.lua
# The sheet's own looks below the level: plan says so as check does,
# naming the field, and simulates nothing.
sed -i 's/looks = { 5, 20 }, metrics/looks = { 4, 20 }, metrics/' flo.lua
expect 2 "the sheet's own looks below the level: check refuses" "$PREREG" \
  check flo.lua
expect 2 "the sheet's own looks below the level: plan refuses" "$PREREG" \
  plan flo.lua "${PLAN[@]}" --json
check_grep "plan names the sheet's field and the fix" \
  '^prereg: flo\.lua: workloads\[1\]\.looks\[1\]: 4 runs per arm is below the 5 .*make every look at least 5.*or plan other looks with --looks' \
  "$out"
check "plan printed no plan" bash -c '! grep -q "\"comparisons\"" <<<"$1"' _ "$out"
# The rule the plan was computed for: stored with it (rule_sha256), and a
# rule changed after the plan is said by check and at the top of the
# report; a block that does not record it is said too.
check_grep "the block records the rule planned for" \
  '^    rule_sha256 = "[0-9a-f]{64}",$' "$(cat hyp.lua)"
expect 0 "the rule as planned: check" "$PREREG" check hyp.lua
check "the rule as planned: no warning of it" \
  bash -c '! grep -q "another rule\|does not record the rule" <<<"$1"' _ "$out"
sed -e 's/id = "hyp"/id = "moved"/' -e 's/cmd = "true", //' \
  -e 's/{ "slower", ratio_above = 1, ci_excludes = 1 }/{ "slower", ratio_above = 1.5, ci_excludes = 1 }/' \
  hyp.lua >moved.lua
check "the rule edited after the plan" grep -q 'ratio_above = 1.5' moved.lua
expect 0 "rule changed after the plan: check passes" "$PREREG" check moved.lua
check_grep "rule changed after the plan: check warns" \
  '^warning: the plan block \(line [0-9]+\) was computed for another rule than this sheet.s \(rule_sha256 [0-9a-f]{12}, this rule [0-9a-f]{12}: .*run prereg plan --write again' \
  "$out"
expect 0 "rule changed: register" "$PREREG" register moved.lua
expect 0 "rule changed: import" "$PREREG" import moved.lua src.csv
expect 0 "rule changed: report" "$PREREG" report moved.lua --out moved
check_grep "rule changed: said at the top of the report" \
  '^> \*\*RULE CHANGED AFTER THE PLAN\.\*\* The runs per arm were chosen by .prereg plan. for another rule' \
  "$(sed -n '1,/^# /p' moved/report.md)"
# The XLSX shows the notice too, under its status line and the status
# flags' notices, with the same words (the one list of notices; code
# spans as plain text).
xl=$(xlsx_text moved/report.xlsx 1)
check_grep "rule changed: the XLSX's rows under the status line" \
  '^RULE CHANGED AFTER THE PLAN: The runs per arm were chosen by prereg plan for another rule' \
  "$(sed -n 2,6p <<<"$xl")"
md_notice=$(sed -n 's/^> \*\*RULE CHANGED AFTER THE PLAN\.\*\* //p' moved/report.md |
  sed -e 's/`//g' -e 's/ (see Sample size)\.$//')
check "rule changed: the XLSX says what the Markdown says" grep -qF \
  "RULE CHANGED AFTER THE PLAN: $md_notice (see Sample size in report.md or report.html)." \
  <<<"$(tr '\n' ' ' <<<"$xl")"
check_grep "rule changed: with both digests" \
  'SHA-256 [0-9a-f]{12}, these [0-9a-f]{12}\)' "$md_notice"
check_grep "rule changed: and in Sample size" \
  '\*\*The rule was changed after the plan\*\*' "$(sed -n '/^## Sample size/,/^## /p' moved/report.md)"
sed -e 's/id = "hyp"/id = "asis"/' -e 's/cmd = "true", //' hyp.lua >asis.lua
expect 0 "the rule as planned: register" "$PREREG" register asis.lua
expect 0 "the rule as planned: import" "$PREREG" import asis.lua src.csv
expect 0 "the rule as planned: report" "$PREREG" report asis.lua --out hyprep
check "the rule as planned: no notice" \
  bash -c '! grep -q "RULE CHANGED\|changed after the plan" "$1"' _ hyprep/report.md
check "the rule as planned: no notice in the XLSX" \
  bash -c '! grep -q "RULE CHANGED" <<<"$1"' _ "$(xlsx_text hyprep/report.xlsx 1)"
sed -e 's/id = "hyp"/id = "old"/' -e '/rule_sha256/d' hyp.lua >old.lua
expect 0 "a plan block from before: check" "$PREREG" check old.lua
check_grep "a plan block from before: said" \
  '^warning: the plan block \(line [0-9]+\) does not record the rule it was computed for \(rule_sha256\)' \
  "$out"

# A min_n the sheet writes below the level's fewest: check warns, with
# the fix; the default (the level's floor where the sheet is silent) and
# a min_n at it, no warning. A look below the fewest its own level needs:
# refused by check and register (exit 2), naming the field and the fix.
check "the default min_n: no warning of min_n" \
  bash -c '! grep -q "rule.min_n" <<<"$1"' _ "$out"
sed -e 's/id = "hyp"/id = "mn3"/' -e 's/rule = { seed = 3,/rule = { seed = 3, min_n = 3,/' \
  hyp.before >mn3.lua
expect 0 "min_n 3: check" "$PREREG" check mn3.lua
check_grep "min_n 3: check warns" \
  '^warning: rule.min_n is 3, below the 5 values per arm a 95% interval needs .*set min_n = 5' \
  "$out"
sed -e 's/id = "hyp"/id = "mn5"/' -e 's/rule = { seed = 3,/rule = { seed = 3, min_n = 5,/' \
  hyp.before >mn5.lua
expect 0 "min_n 5: check" "$PREREG" check mn5.lua
check "min_n 5: no warning of min_n" \
  bash -c '! grep -q "rule.min_n" <<<"$1"' _ "$out"
sed -e 's/id = "hyp"/id = "low"/' -e 's/runs = 40,/runs = 40, looks = { 4, 40 },/' \
  hyp.before >low.lua
expect 2 "a look below the level: check refuses" "$PREREG" check low.lua
check_grep "it names the field and the fix" \
  'low.lua: workloads\[1\]\.looks\[1\]: 4 runs per arm is below the 5 an interval at this look.s 97\.5% \(its share of the error over 2 looks\) needs: .*make every look at least 5' \
  "$out"
expect 2 "a look below the level: register refuses" "$PREREG" register low.lua
check_grep "register names it too" 'workloads\[1\]\.looks\[1\]: 4 runs per arm' "$out"
check "nothing registered" [ ! -e data/low/versions ]
sed -i 's/looks = { 4, 40 }/looks = { 5, 40 }/' low.lua
expect 0 "a look at the level: check" "$PREREG" check low.lua
done_testing 118
